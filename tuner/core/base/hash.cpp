#include <tuner/core/base/hash.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <openssl/evp.h>

#include <tuner/core/base/result.hpp>
#include <tuner/core/base/safe_file.hpp>

namespace tune {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw error("sha256: cannot initialise the digest");
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Sha256::update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

void Sha256::update_field(std::string_view data) {
  update(std::to_string(data.size()));
  update(":");
  update(data);
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

std::string read_file(const std::filesystem::path& path) {
  if (auto d = not_regular_problem(path)) throw error(d->str());  // a FIFO would block
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("cannot read '" + path.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string sha256_file(const std::filesystem::path& path) {
  // In pieces: a file may be larger than what is worth holding in memory (a trial log).
  if (auto d = not_regular_problem(path)) throw error(d->str());  // /dev/zero would never end
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("cannot read '" + path.string() + "'");
  Sha256 h;
  std::string chunk(std::size_t{1} << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    h.update(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw error("cannot read '" + path.string() + "'");
  return h.hex_digest();
}

std::uint64_t fnv1a64(std::string_view data, std::uint64_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace tune
