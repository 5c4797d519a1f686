#include <tuner/core/build/compile_request.hpp>

#include <tuner/core/base/atomic_file.hpp>

namespace tune {

namespace fs = std::filesystem;

CompileRequest compile_request(const Manifest& manifest, const CacheKeyer& keyer,
                               const Config& config, const std::string& arch, const CacheKey& key,
                               const std::vector<std::string>& dependency_names) {
  CompileRequest request;
  request.key = key.digest;
  request.key_schema = key.schema;
  request.arch = arch;
  request.config_id = config.id();
  request.entry = manifest.entry;
  request.entry_template = keyer.entry_template();
  request.argv_keyed = keyer.keyed_argv(config, arch);
  request.dependencies = dependency_names;
  // Copies: the request may outlive the caller's loop variables.
  request.command = [&keyer, config, arch](const fs::path& output) {
    CompileCommand command = keyer.compile_command(config, arch, output);
    if (command.params_header)
      write_file_atomic(*command.params_header, command.params_header_text);
    if (command.entry_unit) write_file_atomic(*command.entry_unit, command.entry_unit_text);
    return command.argv;
  };
  return request;
}

}  // namespace tune
