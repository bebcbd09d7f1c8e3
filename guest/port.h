/*
 * port: the guest end of the virtio-serial channel to the host. Finds the
 * port by name under <root>/sys/class/virtio-ports, loads virtio_console when
 * it is missing (fork/exec of modprobe, no shell), opens /dev/<vportXpY> and
 * waits for the host's "bye". Never prints, never exits.
 */
#ifndef THPEVAL_GUEST_PORT_H
#define THPEVAL_GUEST_PORT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

#define PORT_MODPROBE "/sbin/modprobe"
#define PORT_BYE "bye\n"

/* <root>/dev/<vportXpY> of the port named name; -ENOENT if there is none. */
int port_find(const char *root, const char *name, char *dev, size_t len, struct err *e);
/* The port names seen, "vport0p1=org.x vport0p2=..." (diagnostics). */
void port_list(const char *root, char *buf, size_t len);
/*
 * Find (loading virtio_console once if allowed), wait up to wait_ms for the
 * port and its device node, open it O_RDWR|O_NONBLOCK. The fd, or -errno.
 */
int port_open(const char *root, const char *name, bool load, int wait_ms, struct err *e);
/* Wait up to timeout_ms for "bye\n" from the host: 0, -ETIMEDOUT, or -EPIPE (host gone). */
int port_wait_bye(int fd, int timeout_ms, struct err *e);

#endif
