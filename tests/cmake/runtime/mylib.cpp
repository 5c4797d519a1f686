// A library's API over its embedded winners: the image a device gets and its launch geometry.
#include <string>

#include "scale_embedded.hpp"

namespace mylib {

// One line per bucket for device `sm`: the image's config and its BLOCK and UNROLL, read from
// the image itself (the fallback image's are its own).
std::string describe(int sm) {
  namespace w = tune_winners::mylib::scale;
  std::string out;
  for (w::Bucket b : {w::Bucket::small, w::Bucket::large}) {
    const tune::runtime::EmbeddedImage& im = w::image(sm, b);
    out += std::string(im.bucket_name) + " " + im.arch + " " + im.config_id +
           " BLOCK=" + std::to_string(tune::runtime::int_param(im, "BLOCK")) +
           " UNROLL=" + std::to_string(tune::runtime::int_param(im, "UNROLL")) + "\n";
  }
  return out;
}

// The winner of a bucket on the current device: without a driver, the runtime's error.
std::string load_small() {
  try {
    tune_winners::mylib::scale::function(tune_winners::mylib::scale::Bucket::small);
    return "loaded";
  } catch (const tune::runtime::error& e) {
    return e.what();
  }
}

}  // namespace mylib
