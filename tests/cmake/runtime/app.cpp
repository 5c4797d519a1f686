// A program linking mylib: prints what sm_90 and sm_86 devices would launch, then tries a load.
#include <cstdio>
#include <string>

namespace mylib {
std::string describe(int sm);
std::string load_small();
}  // namespace mylib

int main() {
  std::printf("sm_90:\n%ssm_86:\n%sload: %s\n", mylib::describe(90).c_str(),
              mylib::describe(86).c_str(), mylib::load_small().c_str());
  return 0;
}
