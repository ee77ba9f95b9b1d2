# MantraPython.cmake - finds a Python 3 interpreter that can run the generator (needs jinja2 and
# yaml; one that also has pytest, for tests/gen, is preferred). Sets the cache variable
# MANTRA_PYTHON (absolute path of the real interpreter, not a pyenv shim). Override with -DMANTRA_PYTHON=/path/to/python3 or the MANTRA_PYTHON environment
# variable.
include_guard(GLOBAL)

function(_mantra_python_ok candidate modules out_exe)
  set(${out_exe} "" PARENT_SCOPE)
  if(NOT candidate)
    return()
  endif()
  execute_process(
    COMMAND "${candidate}" -c "import sys, ${modules}; sys.stdout.write(sys.executable)"
    RESULT_VARIABLE rc OUTPUT_VARIABLE exe ERROR_QUIET)
  if(rc EQUAL 0 AND exe)
    set(${out_exe} "${exe}" PARENT_SCOPE)
  endif()
endfunction()

if(NOT MANTRA_PYTHON)
  set(_mantra_candidates "$ENV{MANTRA_PYTHON}")
  find_program(_mantra_path_python3 NAMES python3 NO_CACHE)
  list(APPEND _mantra_candidates "${_mantra_path_python3}" /usr/bin/python3 /usr/local/bin/python3)
  set(_mantra_found "")
  # Prefer one that also has pytest (the generator's tests, tests/gen).
  foreach(_modules "jinja2, yaml, pytest" "jinja2, yaml")
    foreach(_c IN LISTS _mantra_candidates)
      _mantra_python_ok("${_c}" "${_modules}" _mantra_found)
      if(_mantra_found)
        break()
      endif()
    endforeach()
    if(_mantra_found)
      break()
    endif()
  endforeach()
  if(_mantra_found)
    set(MANTRA_PYTHON "${_mantra_found}" CACHE FILEPATH "Python 3 with jinja2 and yaml, runs mantra-gen")
  else()
    message(WARNING "mantra: no python3 with the jinja2 and yaml modules found; the generator will "
                    "not run (make deps installs python3-jinja2 python3-yaml)")
    if(_mantra_path_python3)
      set(MANTRA_PYTHON "${_mantra_path_python3}" CACHE FILEPATH "Python 3 with jinja2 and yaml, runs mantra-gen")
    else()
      set(MANTRA_PYTHON "python3" CACHE FILEPATH "Python 3 with jinja2 and yaml, runs mantra-gen")
    endif()
  endif()
  unset(_mantra_candidates)
  unset(_mantra_found)
endif()
message(STATUS "mantra: generator Python: ${MANTRA_PYTHON}")
