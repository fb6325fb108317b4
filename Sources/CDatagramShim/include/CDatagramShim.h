#pragma once
// Batched datagram I/O for the DNS listener (SPEC §9): recvmmsg(2) and sendmmsg(2) and their
// `struct mmsghdr` are _GNU_SOURCE declarations that the Swift Glibc module does not import.
// One `scrolloff_datagrams` holds a batch's receive slots, their senders' addresses, and the
// replies staged for them, allocated once per listener thread so that serving a batch allocates
// nothing.

#include <stddef.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scrolloff_datagrams scrolloff_datagrams;

/// Allocates `count` receive slots of `slot_size` bytes and as many reply slots of `reply_size`
/// bytes. Returns NULL when out of memory.
scrolloff_datagrams *scrolloff_datagrams_create(unsigned count, unsigned slot_size, unsigned reply_size);

void scrolloff_datagrams_destroy(scrolloff_datagrams *batch);

/// recvmmsg(2) with MSG_WAITFORONE: blocks until one datagram is queued, then takes what else is
/// queued, up to the batch size, without waiting. Clears the staged replies first. Returns the
/// number of datagrams, or -errno. A datagram longer than a slot is cut to the slot (MSG_TRUNC).
int scrolloff_datagrams_receive(int fd, scrolloff_datagrams *batch);

/// The bytes of the `index`-th datagram received; `*length` gets its length.
const unsigned char *scrolloff_datagrams_packet(const scrolloff_datagrams *batch, unsigned index, unsigned *length);

/// The sender of the `index`-th datagram; `*length` gets the address length.
const struct sockaddr *scrolloff_datagrams_sender(const scrolloff_datagrams *batch, unsigned index, socklen_t *length);

/// Stages `length` bytes as the reply to the `index`-th datagram's sender. Returns 0, or -1 when
/// the reply is larger than a reply slot (the caller sends it alone).
int scrolloff_datagrams_stage(scrolloff_datagrams *batch, unsigned index, const void *bytes, size_t length);

/// Sends every staged reply with sendmmsg(2), MSG_DONTWAIT: the listener never waits for the
/// socket. A reply the kernel refuses is dropped and the rest still go; a full send buffer
/// (EAGAIN, ENOBUFS) drops what is left. Returns the number of replies dropped; `*first_error`
/// gets the first errno seen (0 if none).
int scrolloff_datagrams_send(int fd, scrolloff_datagrams *batch, int *first_error);

#ifdef __cplusplus
}
#endif
