/*
 * core.h: the umbrella header of ringx: system includes, return codes,
 * forward type names and the small macros every file uses.
 */
#ifndef RX_CORE_H
#define RX_CORE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "ringx_auto.h"

#define RINGX_NAME      "ringx"
#define RINGX_VERSION   "0.1.0"
#define RINGX_VER       RINGX_NAME "/" RINGX_VERSION
/* The nginx release whose behaviour ringx follows: $nginx_version and the
 * "nginx version:" line of -v/-V (tools compare it, so it is a real nginx
 * version number, never ringx's own). */
#define RINGX_NGINX_COMPAT_VERSION  "1.22.1"

/*
 * Return codes shared by every layer. Functions returning rx_int_t use
 * these; a negative value is never a valid count or descriptor.
 */
#define RX_OK        0
#define RX_ERROR    -1
#define RX_AGAIN    -2
#define RX_BUSY     -3
#define RX_DONE     -4
#define RX_DECLINED -5
#define RX_ABORT    -6

typedef intptr_t  rx_int_t;
typedef uintptr_t rx_uint_t;
typedef int64_t   rx_msec_t;   /* milliseconds, signed so differences work */

typedef struct rx_pool_s      rx_pool_t;
typedef struct rx_slab_s      rx_slab_t;
typedef struct rx_log_s       rx_log_t;
typedef struct rx_array_s     rx_array_t;
typedef struct rx_cycle_s     rx_cycle_t;
typedef struct rx_conf_s      rx_conf_t;
typedef struct rx_command_s   rx_command_t;
typedef struct rx_module_s    rx_module_t;
typedef struct rx_open_file_s rx_open_file_t;
typedef struct rx_syslog_peer_s rx_syslog_peer_t;

#define rx_nelems(a)    (sizeof(a) / sizeof((a)[0]))
#define rx_min(a, b)    ((a) < (b) ? (a) : (b))
#define rx_max(a, b)    ((a) > (b) ? (a) : (b))
#define rx_align(n, a)  (((n) + ((a) - 1)) & ~((size_t) (a) - 1))
#define rx_unused(x)    ((void) (x))

#define RX_INVALID_FILE -1
#define RX_MAX_ERROR_STR 2048

#include "str.h"
#include "pool.h"
#include "array.h"
#include "log.h"

#endif /* RX_CORE_H */
