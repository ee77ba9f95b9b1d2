/* run_host.h with POSIX signals and threads. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mantra/pump.h"
#include "run_host.h"

static void (*g_on_request)(void);
static atomic_int g_pump_stop;
static pthread_t g_pump_thread;
static int g_pumping;


static void on_sigusr2(int sig) {
    (void)sig;
    g_on_request();
}

static void *pump_main(void *arg) {
    (void)arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    while (!atomic_load(&g_pump_stop)) {
        mantra_pump();
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int run_host_start(void (*on_request)(void), int threaded) {
    g_on_request = on_request;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigusr2;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR2, &sa, NULL) != 0)
        return 0;
    if (threaded) {
        atomic_store(&g_pump_stop, 0);
        g_pumping = pthread_create(&g_pump_thread, NULL, pump_main, NULL) == 0;
    }
    return 1;
}

void run_host_stop(void) {
    if (g_pumping) {
        atomic_store(&g_pump_stop, 1);
        pthread_join(g_pump_thread, NULL);
        g_pumping = 0;
    }
}
