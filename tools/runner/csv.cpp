// RFC 4180 CSV (tools/runner/csv.hpp).
#include "tools/runner/csv.hpp"

namespace saddle {

std::string csv_field(const std::string& f) {
  if (f.find_first_of(",\"\r\n#") == std::string::npos) return f;
  std::string out = "\"";
  for (char ch : f) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) s += ',';
    s += csv_field(fields[i]);
  }
  return s;
}

std::string csv_comment(const std::string& text) {
  std::string s = text;
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return s;
}

namespace {
// Parses one record starting at text[i] (not a comment, not an empty line); advances i past its
// line break. Returns "" or the reason.
std::string parse_one(const std::string& text, std::size_t& i, std::vector<std::string>& fields,
                      std::size_t& line) {
  fields.clear();
  const std::size_t n = text.size();
  for (;;) {
    std::string f;
    if (i < n && text[i] == '"') {
      ++i;
      for (;;) {
        if (i >= n) return "unterminated quoted field";
        const char ch = text[i++];
        if (ch == '"') {
          if (i < n && text[i] == '"') {
            f += '"';
            ++i;
            continue;
          }
          break;
        }
        if (ch == '\n') ++line;
        f += ch;
      }
      if (i < n && text[i] != ',' && text[i] != '\n' && !(text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') &&
          !(text[i] == '\r' && i + 1 == n))
        return "text after a closing quote";
    } else {
      while (i < n && text[i] != ',' && text[i] != '\n') {
        if (text[i] == '"') return "a quote inside an unquoted field";
        if (text[i] == '\r' && (i + 1 == n || text[i + 1] == '\n')) {
          ++i;
          continue;
        }
        f += text[i++];
      }
    }
    fields.push_back(std::move(f));
    if (i >= n) return "";
    if (text[i] == '\r') ++i;
    if (i >= n) return "";
    if (text[i] == '\n') {
      ++i;
      ++line;
      return "";
    }
    ++i;  // ','
  }
}
}  // namespace

bool parse_csv_record(const std::string& line, std::vector<std::string>& fields) {
  if (line.find('\n') != std::string::npos) return false;
  std::size_t i = 0, l = 1;
  return parse_one(line, i, fields, l).empty();
}

std::string parse_csv(const std::string& text, const std::function<void(const std::string&)>& on_comment,
                      const std::function<void(std::vector<std::string>&&, std::size_t)>& on_record) {
  std::size_t i = 0, line = 1;
  const std::size_t n = text.size();
  std::vector<std::string> fields;
  while (i < n) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == n || text[i + 1] == '\n'))) {
      i += text[i] == '\r' ? (i + 1 < n ? 2 : 1) : 1;
      ++line;
      continue;
    }
    if (text[i] == '#') {
      std::size_t e = text.find('\n', i);
      if (e == std::string::npos) e = n;
      std::string c = text.substr(i, e - i);
      if (!c.empty() && c.back() == '\r') c.pop_back();
      on_comment(c);
      i = e < n ? e + 1 : n;
      ++line;
      continue;
    }
    const std::size_t start = line;
    const std::string why = parse_one(text, i, fields, line);
    if (!why.empty()) return "line " + std::to_string(start) + ": " + why;
    on_record(std::move(fields), start);
    fields = {};
  }
  return "";
}

}  // namespace saddle
