// The compiled-in reference of the RS-unstable windows (mc/slr_reference.*)
// against the committed CSVs it was generated from (data/validation/erm_inf/:
// `mc slr --extrapolate` D = inf rows and `slr erm-1rsb` rows):
// every row of the CSVs is in the table with the same numbers and the table has
// no other point.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mc/slr_reference.hpp"

using namespace saddle::slr::mc;

namespace {

using CsvRow = std::map<std::string, std::string>;

std::vector<std::string> split_commas(const std::string &line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ','))
    out.push_back(cell);
  if (!line.empty() && line.back() == ',')
    out.push_back("");
  return out;
}

std::vector<CsvRow> read_rows(const std::string &path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    const auto cells = split_commas(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    REQUIRE(cells.size() == header.size());
    CsvRow r;
    for (std::size_t i = 0; i < cells.size(); ++i)
      r[header[i]] = cells[i];
    rows.push_back(r);
  }
  return rows;
}

double num(const CsvRow &r, const std::string &key) {
  REQUIRE(r.count(key));
  return std::strtod(r.at(key).c_str(), nullptr);
}

double exponent_of(const std::string &t) {
  return t == "2/3" ? 2.0 / 3 : t == "1/2" ? 0.5 : 1.0;
}

const std::string kDir =
    std::string(SADDLE_SOURCE_DIR) + "/data/validation/erm_inf/";

} // namespace

TEST_CASE(
    "reference: the ERM D = inf table equals the committed extrapolation rows",
    "[slr_reference]") {
  std::size_t n = 0;
  for (const char *file : {"linear_L3.csv", "softmax_L3.csv"}) {
    for (const auto &r : read_rows(kDir + file)) {
      if (r.at("D") != "inf" || r.at("seed_index") != "all")
        continue;
      const ReferenceSetting s = reference_setting();
      CHECK(r.at("task") == s.task);
      CHECK(num(r, "L") == s.L);
      CHECK(num(r, "nu") == s.nu);
      CHECK(num(r, "lambda") == s.lambda);
      CHECK(num(r, "delta") == s.delta);
      const ErmInfPoint *p = find_erm_inf(r.at("activation"), num(r, "alpha"));
      REQUIRE(p != nullptr);
      ++n;
      CHECK(p->seeds == static_cast<int>(num(r, "seeds")));
      const std::vector<std::pair<std::string, const ExtrapolatedValue *>> qs =
          {{"test_error", &p->test_error},
           {"train_loss", &p->train_loss},
           {"train_error", &p->train_error}};
      for (const auto &q : qs) {
        INFO(file << " alpha " << r.at("alpha") << " " << q.first);
        CHECK(q.second->value == Approx(num(r, q.first)).epsilon(1e-9));
        CHECK(q.second->se == Approx(num(r, q.first + "_se")).epsilon(1e-9));
        CHECK(q.second->exponent ==
              Approx(exponent_of(r.at(q.first + "_fit"))));
        if (!r.at(q.first + "_fit_p").empty())
          CHECK(q.second->fit_p ==
                Approx(num(r, q.first + "_fit_p")).epsilon(1e-9));
        CHECK(q.second->se > 0);
      }
    }
  }
  CHECK(n == erm_inf_reference().size());
  CHECK(n >= 5);
}

TEST_CASE("reference: the 1RSB table equals the committed 1RSB rows",
          "[slr_reference]") {
  std::size_t n = 0;
  DIR *dir = opendir((kDir + "rsb").c_str());
  REQUIRE(dir != nullptr);
  std::vector<std::string> files;
  while (dirent *e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.size() > 4 && name.substr(name.size() - 4) == ".csv")
      files.push_back(name);
  }
  closedir(dir);
  for (const auto &file : files) {
    for (const auto &r : read_rows(kDir + "rsb/" + file)) {
      INFO(file);
      CHECK(r.at("symmetry") == "1rsb");
      CHECK(num(r, "L") == reference_setting().L);
      CHECK(num(r, "nu") == reference_setting().nu);
      CHECK(num(r, "lambda") == reference_setting().lambda);
      const RsbReferencePoint *p =
          find_rsb(r.at("activation"), num(r, "alpha"));
      REQUIRE(p != nullptr);
      ++n;
      // converged means below tolerance (1e-5): the committed rows were written when a limit
      // cycle with residual <= 1e-2 still counted (make_table.py reads them so)
      CHECK(p->converged == (r.at("converged") == "1" && num(r, "residual") <= 1e-5));
      CHECK(p->residual == Approx(num(r, "residual")).epsilon(1e-9));
      CHECK(p->test_error == Approx(num(r, "test_error")).epsilon(1e-9));
      CHECK(p->test_error_se == Approx(num(r, "test_error_se")).epsilon(1e-9));
      CHECK(p->train_loss == Approx(num(r, "train_loss")).epsilon(1e-9));
      CHECK(p->train_loss_se == Approx(num(r, "train_loss_se")).epsilon(1e-9));
      CHECK(p->train_error == Approx(num(r, "train_error")).epsilon(1e-9));
      CHECK(p->x_parisi == Approx(num(r, "x_parisi")).epsilon(1e-9));
      CHECK(p->dq_k == Approx(num(r, "dq_k")).epsilon(1e-9));
      CHECK(p->dq_v == Approx(num(r, "dq_v")).epsilon(1e-9));
    }
  }
  CHECK(n == rsb_reference().size());
}
