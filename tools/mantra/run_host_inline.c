/* run_host.h for hosts without signals or threads (WASI): nothing to install; run.c pumps the job
 * queue when the program returns, and mantra_shutdown runs what is left. */
#include "run_host.h"


int run_host_start(void (*on_request)(void), int threaded) {
    (void)on_request;
    (void)threaded;
    return 0;
}

void run_host_stop(void) {}
