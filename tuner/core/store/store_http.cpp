// The HTTP store: GET, HEAD and PUT with libcurl's easy interface, one request at a time.
// Built only where CMake found libcurl (TUNE_HAVE_CURL); elsewhere an HTTP location is an error
// the caller turns into a warning and local work.
#include <tuner/core/store/store.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/core.h>

#ifdef TUNE_HAVE_CURL
#include <curl/curl.h>
#endif

namespace tune {

#ifdef TUNE_HAVE_CURL

namespace {

// Blobs are cubins: far below this. A server that sends more is not a store of ours.
constexpr std::size_t max_body_bytes = std::size_t{512} << 20;

// curl_global_init is not thread-safe: once, before the first handle.
void init_curl_once() {
  static const bool done = [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw error("cannot initialise libcurl");
    return true;
  }();
  (void)done;
}

struct Upload {
  std::string_view data;
  std::size_t offset = 0;
};

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* up = static_cast<Upload*>(user);
  const std::size_t n = std::min(size * count, up->data.size() - up->offset);
  std::memcpy(buffer, up->data.data() + up->offset, n);
  up->offset += n;
  return n;
}

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const std::size_t n = size * count;
  if (body->size() + n > max_body_bytes) return 0;  // curl then fails with CURLE_WRITE_ERROR
  body->append(data, n);
  return n;
}

// What one attempt ended in.
struct Attempt {
  CURLcode code = CURLE_OK;
  long http = 0;
  std::string body;
  std::string error;
};

// Whether another attempt may help: the server was not reached, answered in part, timed out or
// said it failed (5xx). A 4xx, a redirect we do not follow or a refused TLS peer will not change.
bool transient(const Attempt& a) {
  switch (a.code) {
    case CURLE_OK:
      return a.http >= 500;
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_COULDNT_RESOLVE_HOST:
      return true;
    default:
      return false;
  }
}

class HttpStore final : public Store {
 public:
  HttpStore(std::string url, HttpOptions options)
      : url_(std::move(url)), options_(std::move(options)) {
    init_curl_once();
  }

  std::string where() const override { return url_; }

  StoreReply get(std::string_view path) override { return read(path, false); }
  StoreReply head(std::string_view path) override { return read(path, true); }

  std::optional<std::string> put(std::string_view path, std::string_view body) override {
    if (!valid_store_path(path)) return fmt::format("'{}' is not a store path", path);
    const Attempt a = with_retries([&] { return perform("PUT", path, body); });
    if (a.code != CURLE_OK) return describe(a, path);
    if (a.http >= 200 && a.http < 300) return std::nullopt;
    return describe(a, path);
  }

 private:
  StoreReply read(std::string_view path, bool head_only) {
    if (!valid_store_path(path))
      return {StoreStatus::failed, {}, fmt::format("'{}' is not a store path", path)};
    Attempt a = with_retries([&] { return perform(head_only ? "HEAD" : "GET", path, {}); });
    if (a.code == CURLE_OK && a.http == 200) return {StoreStatus::ok, std::move(a.body), {}};
    if (a.code == CURLE_OK && a.http == 404) return {StoreStatus::missing, {}, {}};
    return {StoreStatus::failed, {}, describe(a, path)};
  }

  template <class F>
  Attempt with_retries(F&& once) {
    double wait = options_.backoff_s;
    Attempt a;
    for (int i = 0; i < std::max(1, options_.attempts); ++i) {
      if (i > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        wait *= 4;
      }
      a = once();
      if (!transient(a)) break;
    }
    return a;
  }

  std::string describe(const Attempt& a, std::string_view path) const {
    if (a.code != CURLE_OK)
      return fmt::format("'{}/{}': {}", url_, path,
                         a.error.empty() ? curl_easy_strerror(a.code) : a.error);
    if (a.http >= 300 && a.http < 400)
      return fmt::format("'{}/{}' answered HTTP {} (a redirect the store does not follow)", url_,
                         path, a.http);
    return fmt::format("'{}/{}' answered HTTP {}", url_, path, a.http);
  }

  Attempt perform(const char* method, std::string_view path, std::string_view body) {
    Attempt a;
    CURL* curl = curl_easy_init();
    if (curl == nullptr) {
      a.code = CURLE_FAILED_INIT;
      return a;
    }
    char errbuf[CURL_ERROR_SIZE] = {0};
    const std::string url = fmt::format("{}/{}", url_, path);
    const bool put = std::string_view(method) == "PUT";
    const bool head = std::string_view(method) == "HEAD";
    Upload upload{body, 0};
    curl_slist* headers = nullptr;
    // No `Expect: 100-continue` round trip before a small upload.
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::lround(options_.connect_timeout_s * 1000)));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(std::lround(options_.timeout_s * 1000)));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "tune-store/1");
    // Reads follow a few redirects (a load balancer, a moved prefix), to http(s) only; the
    // credentials stay with the first host (curl's default). An upload is not redirected.
    if (!put) {
      curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 3L);
      curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    if (!options_.ca_bundle.empty())
      curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_bundle.c_str());
    if (!options_.bearer_token.empty()) {
      curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
      curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, options_.bearer_token.c_str());
    } else if (!options_.basic_auth.empty()) {
      curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(curl, CURLOPT_USERPWD, options_.basic_auth.c_str());
    } else {
      curl_easy_setopt(curl, CURLOPT_NETRC, CURL_NETRC_OPTIONAL);
      if (!options_.netrc_file.empty())
        curl_easy_setopt(curl, CURLOPT_NETRC_FILE, options_.netrc_file.c_str());
    }
    if (put) {
      curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
      curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (head) {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a.body);
    a.code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.http);
    if (a.code != CURLE_OK) a.error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(a.code);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (a.code != CURLE_OK) a.body.clear();
    return a;
  }

  std::string url_;
  HttpOptions options_;
};

}  // namespace

std::unique_ptr<Store> open_http_store(std::string url, HttpOptions options) {
  return std::make_unique<HttpStore>(std::move(url), std::move(options));
}

bool http_store_available() noexcept {
  return true;
}

#else  // !TUNE_HAVE_CURL

std::unique_ptr<Store> open_http_store(std::string url, HttpOptions /*options*/) {
  throw error(fmt::format("remote store '{}': this tuner was built without libcurl", url));
}

bool http_store_available() noexcept {
  return false;
}

#endif

}  // namespace tune
