#define _GNU_SOURCE
#include "CDatagramShim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct scrolloff_datagrams {
    unsigned count;
    unsigned slot_size;
    unsigned reply_size;
    unsigned staged;
    unsigned char *slots;
    unsigned char *replies;
    struct sockaddr_storage *senders;
    struct iovec *receive_vectors;
    struct mmsghdr *received;
    struct iovec *send_vectors;
    struct mmsghdr *outgoing;
};

scrolloff_datagrams *scrolloff_datagrams_create(unsigned count, unsigned slot_size, unsigned reply_size) {
    if (count == 0 || slot_size == 0 || reply_size == 0) return NULL;
    scrolloff_datagrams *batch = calloc(1, sizeof *batch);
    if (!batch) return NULL;
    batch->count = count;
    batch->slot_size = slot_size;
    batch->reply_size = reply_size;
    batch->slots = malloc((size_t)count * slot_size);
    batch->replies = malloc((size_t)count * reply_size);
    batch->senders = calloc(count, sizeof *batch->senders);
    batch->receive_vectors = calloc(count, sizeof *batch->receive_vectors);
    batch->received = calloc(count, sizeof *batch->received);
    batch->send_vectors = calloc(count, sizeof *batch->send_vectors);
    batch->outgoing = calloc(count, sizeof *batch->outgoing);
    if (!batch->slots || !batch->replies || !batch->senders || !batch->receive_vectors || !batch->received
        || !batch->send_vectors || !batch->outgoing) {
        scrolloff_datagrams_destroy(batch);
        return NULL;
    }
    for (unsigned i = 0; i < count; i++) {
        batch->receive_vectors[i].iov_base = batch->slots + (size_t)i * slot_size;
        batch->receive_vectors[i].iov_len = slot_size;
        batch->received[i].msg_hdr.msg_iov = &batch->receive_vectors[i];
        batch->received[i].msg_hdr.msg_iovlen = 1;
        batch->received[i].msg_hdr.msg_name = &batch->senders[i];
    }
    return batch;
}

void scrolloff_datagrams_destroy(scrolloff_datagrams *batch) {
    if (!batch) return;
    free(batch->slots);
    free(batch->replies);
    free(batch->senders);
    free(batch->receive_vectors);
    free(batch->received);
    free(batch->send_vectors);
    free(batch->outgoing);
    free(batch);
}

int scrolloff_datagrams_receive(int fd, scrolloff_datagrams *batch) {
    batch->staged = 0;
    for (unsigned i = 0; i < batch->count; i++) {
        // recvmmsg writes the address length and flags back; the rest of the header stays as set.
        batch->received[i].msg_hdr.msg_namelen = sizeof batch->senders[i];
        batch->received[i].msg_hdr.msg_flags = 0;
        batch->received[i].msg_len = 0;
    }
    int received = recvmmsg(fd, batch->received, batch->count, MSG_WAITFORONE, NULL);
    return received < 0 ? -errno : received;
}

const unsigned char *scrolloff_datagrams_packet(const scrolloff_datagrams *batch, unsigned index, unsigned *length) {
    unsigned received = batch->received[index].msg_len;
    *length = received < batch->slot_size ? received : batch->slot_size;
    return batch->slots + (size_t)index * batch->slot_size;
}

const struct sockaddr *scrolloff_datagrams_sender(const scrolloff_datagrams *batch, unsigned index, socklen_t *length) {
    *length = batch->received[index].msg_hdr.msg_namelen;
    return (const struct sockaddr *)&batch->senders[index];
}

int scrolloff_datagrams_stage(scrolloff_datagrams *batch, unsigned index, const void *bytes, size_t length) {
    if (length > batch->reply_size || batch->staged >= batch->count) return -1;
    unsigned slot = batch->staged++;
    unsigned char *reply = batch->replies + (size_t)slot * batch->reply_size;
    memcpy(reply, bytes, length);
    batch->send_vectors[slot].iov_base = reply;
    batch->send_vectors[slot].iov_len = length;
    struct msghdr *header = &batch->outgoing[slot].msg_hdr;
    memset(header, 0, sizeof *header);
    header->msg_iov = &batch->send_vectors[slot];
    header->msg_iovlen = 1;
    header->msg_name = &batch->senders[index];
    header->msg_namelen = batch->received[index].msg_hdr.msg_namelen;
    return 0;
}

int scrolloff_datagrams_send(int fd, scrolloff_datagrams *batch, int *first_error) {
    *first_error = 0;
    int dropped = 0;
    unsigned next = 0;
    while (next < batch->staged) {
        int sent = sendmmsg(fd, batch->outgoing + next, batch->staged - next, MSG_DONTWAIT);
        if (sent > 0) {
            next += (unsigned)sent;
            continue;
        }
        int error = sent < 0 ? errno : EIO;
        if (error == EINTR) continue;
        if (*first_error == 0) *first_error = error;
        if (error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS) {
            // The socket's send buffer is full: trying each remaining reply would fail the same way.
            dropped += (int)(batch->staged - next);
            break;
        }
        // sendmmsg reports an error only for the first message it tried: drop that one, send the rest.
        dropped += 1;
        next += 1;
    }
    batch->staged = 0;
    return dropped;
}
