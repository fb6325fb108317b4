#include "CCurlShim.h"

#include <pthread.h>

static pthread_once_t global_init_once = PTHREAD_ONCE_INIT;
static CURLcode global_init_result = CURLE_FAILED_INIT;

static void run_global_init(void) { global_init_result = curl_global_init(CURL_GLOBAL_DEFAULT); }

CURLcode scrolloff_curl_global_init_once(void) {
    pthread_once(&global_init_once, run_global_init);
    return global_init_result;
}

// libcurl numbers its options in bands of 10000 by argument type (curl.h, CURLOPTTYPE_*).
// Strings are object pointers too (CURLOPTTYPE_STRINGPOINT == CURLOPTTYPE_OBJECTPOINT).
static int option_band(CURLoption option) { return (int)option / 10000 * 10000; }

CURLcode scrolloff_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    if (option_band(option) != CURLOPTTYPE_LONG) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(handle, option, value);
}

CURLcode scrolloff_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    if (option_band(option) != CURLOPTTYPE_STRINGPOINT) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(handle, option, value);
}

CURLcode scrolloff_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    if (option_band(option) != CURLOPTTYPE_OBJECTPOINT) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(handle, option, value);
}

CURLcode scrolloff_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    if (option_band(option) != CURLOPTTYPE_OFF_T) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(handle, option, value);
}

CURLcode scrolloff_curl_setopt_data_callback(CURL *handle, CURLoption option,
                                             scrolloff_curl_data_callback callback) {
    if (option != CURLOPT_WRITEFUNCTION && option != CURLOPT_HEADERFUNCTION)
        return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(handle, option, callback);
}

CURLcode scrolloff_curl_setopt_xferinfo_callback(CURL *handle,
                                                 scrolloff_curl_xferinfo_callback callback) {
    CURLcode result = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (result != CURLE_OK) return result;
    return curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

CURLcode scrolloff_curl_setopt_opensocket_callback(CURL *handle,
                                                   scrolloff_curl_opensocket_callback callback,
                                                   void *context) {
    CURLcode result = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
    if (result != CURLE_OK) return result;
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, context);
}

CURLcode scrolloff_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    if ((info & CURLINFO_TYPEMASK) != CURLINFO_LONG) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(handle, info, value);
}

CURLcode scrolloff_curl_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    if ((info & CURLINFO_TYPEMASK) != CURLINFO_STRING) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(handle, info, value);
}

CURLcode scrolloff_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    if ((info & CURLINFO_TYPEMASK) != CURLINFO_OFF_T) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(handle, info, value);
}
