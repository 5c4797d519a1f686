// The reader of space files, part four: the optional [entry] table of a template entry
// (entry_template.hpp): `template` and the `[entry.map.<PARAM>]` tables of C++ text.
#include <tuner/core/space/space_parser.hpp>

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>
#include <tuner/core/space/entry_template.hpp>

namespace tune::detail {

bool SpaceParser::read_entry() {
  static constexpr std::string_view keys[] = {"template", "map"};
  const toml::table* t = settings_table("entry", keys);
  if (t == nullptr) return !err;
  if (const toml::node* m = t->get("map")) {
    if (!m->is_table())
      return error_at(*m, fmt::format("'map' in [entry] must be a table of tables such as "
                                      "[entry.map.LAYOUT], got {}",
                                      kind_of(*m)));
    std::vector<std::string> names;
    for (const Param& p : s.params_)
      names.push_back(p.name);
    for (const auto& pe : in_order(*m->as_table())) {
      const Param* p = param(pe.key);
      if (p == nullptr)
        return error(pe.key_pos, fmt::format("[entry.map.{}] maps no param (params: {}){}", pe.key,
                                             quoted_list(names), did_you_mean(pe.key, names)));
      if (!pe.node->is_table())
        return error_at(*pe.node, fmt::format("[entry.map.{}] must be a table of value = \"C++ "
                                              "text\", got {}",
                                              pe.key, kind_of(*pe.node)));
      std::map<std::string, std::string> map;
      for (const auto& ve : in_order(*pe.node->as_table())) {
        const auto text = ve.node->value<std::string>();
        if (!text || trim(*text).empty())
          return error_at(*ve.node, fmt::format("value '{}' in [entry.map.{}] must be non-empty "
                                                "C++ text such as \"Layout::Row\"",
                                                ve.key, pe.key));
        if (auto problem = map_text_problem(*text))
          return error_at(*ve.node,
                          fmt::format("value '{}' in [entry.map.{}] holds {}: map text is one "
                                      "C++ template argument such as \"Layout::Row\", nothing "
                                      "else",
                                      printable(ve.key), pe.key, problem->second));
        map[ve.key] = *text;
      }
      // Every value a config can take: the param's list and the explicit configs' values.
      std::set<std::string> values;
      for (const ParamValue& v : p->values)
        values.insert(v.plain());
      for (const Config& c : s.explicit_)
        if (const ParamValue* v = c.find(p->name)) values.insert(v->plain());
      for (const std::string& v : values)
        if (!map.count(v))
          return error(pe.key_pos,
                       fmt::format("[entry.map.{0}] has no C++ text for value '{1}' of param "
                                   "'{0}': add {1} = \"<C++ text>\" to it",
                                   pe.key, v));
      s.entry_maps_[pe.key] = std::move(map);
    }
  }
  if (const toml::node* n = t->get("template")) {
    const auto text = n->value<std::string>();
    if (!text)
      return error_at(*n, fmt::format("'template' in [entry] must be a string such as "
                                      "\"tile_gemm<{{BM}}, {{BN}}>\", got {}",
                                      kind_of(*n)));
    const SourcePos pos = pos_of(n->source());
    result<EntryTemplate> parsed = parse_entry_template(*text, s);
    if (!parsed)  // the column inside the text, past the opening quote
      return error({pos.line, pos.column + parsed.error().column}, parsed.error().message);
    s.entry_template_ = *text;
    s.entry_template_pos_ = pos;
  }
  return true;
}

}  // namespace tune::detail
