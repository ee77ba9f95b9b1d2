# MantraDotnet.cmake - builds the small .NET helper programs of the interop tests (TraceEventDump,
# DiagClient, TraceMaker, CounterCheck) the same way: `dotnet build -c Release` into an artifacts
# folder of the build tree, quiet (the output goes to a log, shown only when the build fails), no
# telemetry, and no build servers left running after the build (-nodeReuse:false,
# UseSharedCompilation=false): CI steps that wait for the build's output pipe to close must not hang.
#
#   mantra_dotnet_build(<stamp> PROJECT <csproj> ARTIFACTS <dir> LOG <file> COMMENT <text>
#                       [DEPENDS <file>...])
# adds a custom command whose OUTPUT is <stamp>, touched after a successful build; the caller puts
# the stamp into a target's DEPENDS. Needs MANTRA_DOTNET (the dotnet executable).

set(MANTRA_DOTNET_ENV "${CMAKE_COMMAND}" -E env DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
    DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1
    DOTNET_CLI_USE_MSBUILD_SERVER=0 MSBUILDDISABLENODEREUSE=1)
# run_quiet.sh LOG CMD...: the command's output goes to LOG, shown only when it fails.
set(MANTRA_DOTNET_QUIET "${PROJECT_SOURCE_DIR}/tests/interop/run_quiet.sh")

function(mantra_dotnet_build stamp)
  cmake_parse_arguments(PARSE_ARGV 1 DB "" "PROJECT;ARTIFACTS;LOG;COMMENT" "DEPENDS")
  foreach(_req PROJECT ARTIFACTS LOG COMMENT)
    if(NOT DB_${_req})
      message(FATAL_ERROR "mantra_dotnet_build(${stamp}): ${_req} is required")
    endif()
  endforeach()
  add_custom_command(
    OUTPUT "${stamp}"
    COMMAND ${MANTRA_DOTNET_ENV} "${MANTRA_DOTNET_QUIET}" "${DB_LOG}"
            "${MANTRA_DOTNET}" build "${DB_PROJECT}" -c Release --artifacts-path "${DB_ARTIFACTS}"
            --nologo -v q -nodeReuse:false -p:UseSharedCompilation=false
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS "${DB_PROJECT}" ${DB_DEPENDS} "${MANTRA_DOTNET_QUIET}"
    COMMENT "${DB_COMMENT}"
    VERBATIM)
endfunction()
