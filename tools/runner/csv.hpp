// The one CSV writer and reader of the program (RFC 4180): every table `saddle` writes goes
// through csv_record, and every CSV it reads (plot, merge, resume, figures) through parse_csv.
// A field holding a comma, a double quote, a line break or a '#' is written in double quotes
// with its quotes doubled, so Python's csv module and pandas (comment='#') read one field per
// header column. Lines starting with '#' outside a record are comments (the provenance header).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace saddle {

// One field as written: quoted when it holds ',', '"', CR, LF or '#'.
std::string csv_field(const std::string& field);
// The fields as one record, without the line break.
std::string csv_record(const std::vector<std::string>& fields);
// A '#' header line: `text` with every control character (a newline in an argument) shown as
// '?', so a comment is always exactly one line.
std::string csv_comment(const std::string& text);

// Splits one record (a line without its line break); false when it is not one (an unterminated
// quote, text after a closing quote, a quote inside an unquoted field).
bool parse_csv_record(const std::string& line, std::vector<std::string>& fields);

// Reads a whole CSV text: on_comment for each '#' line (without its line break), on_record for
// each record with the line it starts on (1-based); empty lines are skipped, CRLF is accepted.
// Returns "" or the reason the text is not CSV ("line 7: unterminated quoted field").
std::string parse_csv(const std::string& text, const std::function<void(const std::string&)>& on_comment,
                      const std::function<void(std::vector<std::string>&&, std::size_t)>& on_record);

}  // namespace saddle
