#pragma once
// Typed, non-variadic wrappers over libcurl's variadic entry points.
//
// Swift cannot call C variadic functions such as curl_easy_setopt and curl_easy_getinfo, and
// passing the wrong type through `...` is undefined behaviour in C anyway. Each wrapper below takes
// exactly one argument type and refuses an option of another type (CURLE_BAD_FUNCTION_ARGUMENT)
// instead of letting libcurl read garbage off the stack.
#include <curl/curl.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The body and header callback shape (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*scrolloff_curl_data_callback)(char *data, size_t size, size_t count, void *context);

/// The progress callback shape (CURLOPT_XFERINFOFUNCTION). A non-zero return aborts the transfer.
typedef int (*scrolloff_curl_xferinfo_callback)(void *context, curl_off_t download_total,
                                                 curl_off_t download_now, curl_off_t upload_total,
                                                 curl_off_t upload_now);

/// The socket callback shape (CURLOPT_OPENSOCKETFUNCTION): libcurl passes the address it is about
/// to connect to; returning CURL_SOCKET_BAD refuses the connection (CURLE_COULDNT_CONNECT).
typedef curl_socket_t (*scrolloff_curl_opensocket_callback)(void *context, curlsocktype purpose,
                                                             struct curl_sockaddr *address);

/// Calls curl_global_init(CURL_GLOBAL_DEFAULT) exactly once per process, from any thread.
/// libcurl's global init is not thread-safe on older versions, so it is guarded by pthread_once.
/// Returns the result of that one call on every call.
CURLcode scrolloff_curl_global_init_once(void);

CURLcode scrolloff_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode scrolloff_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode scrolloff_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode scrolloff_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION only.
CURLcode scrolloff_curl_setopt_data_callback(CURL *handle, CURLoption option,
                                             scrolloff_curl_data_callback callback);
/// Sets CURLOPT_XFERINFOFUNCTION and turns CURLOPT_NOPROGRESS off so that it is called.
CURLcode scrolloff_curl_setopt_xferinfo_callback(CURL *handle,
                                                 scrolloff_curl_xferinfo_callback callback);

/// Sets CURLOPT_OPENSOCKETFUNCTION and its CURLOPT_OPENSOCKETDATA.
CURLcode scrolloff_curl_setopt_opensocket_callback(CURL *handle,
                                                   scrolloff_curl_opensocket_callback callback,
                                                   void *context);

CURLcode scrolloff_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
/// The string stays owned by the handle; copy it before the handle is cleaned up.
CURLcode scrolloff_curl_getinfo_string(CURL *handle, CURLINFO info, const char **value);
CURLcode scrolloff_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

#ifdef __cplusplus
}
#endif
