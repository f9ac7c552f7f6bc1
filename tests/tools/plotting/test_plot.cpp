// Unit tests of the CSV reader (tools/plotting/plot.hpp read_csv): what it keeps of a saddle CSV and what
// it refuses. Each file is written here by hand, so the expected fields are known.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "tools/cli/cli_common.hpp"
#include "tools/plotting/plot.hpp"

using namespace saddle;
using Catch::Matchers::Contains;

namespace {
// A file under the temp directory, removed when the object goes out of scope.
struct TempCsv {
  std::filesystem::path path;
  explicit TempCsv(const std::string& text) {
    static int n = 0;
    path = std::filesystem::temp_directory_path() /
           ("saddle_test_read_csv_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".csv");
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  ~TempCsv() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  std::string str() const { return path.string(); }
};
}  // namespace

TEST_CASE("read_csv: a well-formed file", "[tools][csv]") {
  TempCsv f(
      "# saddle 1.2.3\n# command: saddle ridge --alpha 1,2\n# solver: tol=1e-10\n"
      "alpha,lambda,error\n1,0.1,0.5\n2,0.1,0.25\n# timing: 2 rows, 0.001 s\n");
  const CsvData d = read_csv(f.str());
  CHECK(d.comments == std::vector<std::string>{"# saddle 1.2.3", "# command: saddle ridge --alpha 1,2",
                                               "# solver: tol=1e-10"});
  CHECK(d.columns == std::vector<std::string>{"alpha", "lambda", "error"});
  REQUIRE(d.rows.size() == 2);
  CHECK(d.rows[0] == std::vector<std::string>{"1", "0.1", "0.5"});
  CHECK(d.rows[1] == std::vector<std::string>{"2", "0.1", "0.25"});
  CHECK(d.col("alpha") == 0);
  CHECK(d.col("error") == 2);
  CHECK(d.col("missing") == -1);
}

TEST_CASE("read_csv: '#' lines after the header, blank lines, CRLF, empty fields", "[tools][csv]") {
  TempCsv f("# saddle x\r\na,b\r\n\r\n1,2\r\n# a comment between rows\r\n3,\r\n,\r\n");
  const CsvData d = read_csv(f.str());
  CHECK(d.comments == std::vector<std::string>{"# saddle x"});  // only those before the header
  CHECK(d.columns == std::vector<std::string>{"a", "b"});
  CHECK(d.rows == std::vector<std::vector<std::string>>{{"1", "2"}, {"3", ""}, {"", ""}});
}

TEST_CASE("read_csv: header only (no rows) is a valid empty table", "[tools][csv]") {
  TempCsv f("# saddle 1\nalpha,error\n");
  const CsvData d = read_csv(f.str());
  CHECK(d.columns.size() == 2);
  CHECK(d.rows.empty());
}

TEST_CASE("read_csv: malformed rows, empty and foreign files are InputError", "[tools][csv]") {
  {
    TempCsv f("# saddle 1\na,b,c\n1,2,3\n4,5\n");  // a short row
    CHECK_THROWS_AS(read_csv(f.str()), InputError);
    CHECK_THROWS_WITH(read_csv(f.str()), Contains("2 fields") && Contains("3"));
  }
  {
    TempCsv f("# saddle 1\na,b\n1,2,3\n");  // a long row
    CHECK_THROWS_AS(read_csv(f.str()), InputError);
  }
  for (const char* text : {"", "\n\n", "# saddle 1\n# only comments\n", "a,b\n1,2\n",
                           "# made by something else\na,b\n1,2\n", "#saddle 1\na,b\n"}) {
    INFO("file '" << text << "'");
    TempCsv f(text);
    CHECK_THROWS_AS(read_csv(f.str()), InputError);
  }
  CHECK_THROWS_AS(read_csv("/nonexistent-dir-of-saddle-tests/none.csv"), InputError);
}

// Curves are split by every swept parameter that varies, whatever its name (issue 24): a model
// swept over beta at two values of h gives two curves of four points, not one zig-zag line.
TEST_CASE("plot: curves split by the file's swept parameters", "[tools][plot]") {
  const std::string rows =
      "beta,J,h,m,converged\n"
      "0.5,1,0,0,1\n1,1,0,0,1\n1.5,1,0,0.86,1\n2,1,0,0.96,1\n"
      "0.5,1,0.1,0.1,1\n1,1,0.1,0.4,1\n1.5,1,0.1,0.9,1\n2,1,0.1,0.97,1\n";
  PlotOptions opt;
  opt.y = "m";
  for (const std::string& header : {std::string("# saddle 1\n# command: saddle cw\n") + sweep_header({"beta", "h"}) + "\n",
                                   std::string("# saddle 1\n# command: saddle cw --beta 0.5:2:4 --h 0,0.1\n")}) {
    INFO(header);
    TempCsv f(header + rows);
    const CsvData d = read_csv(f.str());
    CHECK(swept_parameters(d, PlotHints{}) == std::vector<std::string>{"beta", "h"});
    const gnuplot::Figure fig = plot_figure(d, PlotHints{}, opt);
    CHECK_FALSE(fig.heat);
    REQUIRE(fig.series.size() == 2);
    CHECK(fig.series[0].title == "h=0");
    CHECK(fig.series[1].title == "h=0.1");
    for (const auto& s : fig.series) {
      REQUIRE(s.points.size() == 4);
      CHECK(s.points[0][0] == 0.5);
      CHECK(s.points[3][0] == 2.0);
    }
  }
  CHECK(sweep_header({"beta", "h"}) == "# sweep: beta, h");
  CHECK(swept_columns({{"a", 3}, {"b", 1}, {"c", 2}}) == std::vector<std::string>{"a", "c"});
}

TEST_CASE("plot: flagged points break the line and get their own series", "[tools][plot]") {
  TempCsv f("# saddle 1\n# sweep: beta\nbeta,m,repelling,converged\n0.5,0,0,1\n1.5,0,1,1\n2,0,1,1\n3,0.99,0,1\n");
  const gnuplot::Figure fig = plot_figure(read_csv(f.str()), PlotHints{}, [] {
    PlotOptions o;
    o.y = "m";
    return o;
  }());
  REQUIRE(fig.series.size() == 2);
  CHECK(fig.series[0].style == gnuplot::Style::OpenCircles);
  CHECK(fig.series[0].title == "m (repelling fixed point)");
  CHECK(fig.series[0].points.size() == 2);
  CHECK(fig.series[1].style == gnuplot::Style::Line);
  CHECK(std::isnan(fig.series[1].points[1][0]));  // the break
}

TEST_CASE("gnuplot: text is a quoted string, never code", "[tools][plot]") {
  CHECK(gnuplot::quoted("it's") == "'it''s'");
  CHECK(gnuplot::quoted("a\nb") == "'a b'");
  CHECK(gnuplot::quoted("|touch x") == "'|touch x'");
}

// Errors name the flags of the command that draws: --plot-y with --plot on a subcommand, --y in
// `saddle plot` (issue 32).
TEST_CASE("plot: errors name the caller's own flags", "[tools][plot]") {
  TempCsv f("# saddle 1\n# sweep: beta\nbeta,label\n0.5,a\n1,b\n");
  const CsvData d = read_csv(f.str());
  PlotOptions opt;  // no y column the plot knows by name
  CHECK_THROWS_WITH(plot_figure(d, PlotHints{}, opt), Contains("--plot-y"));
  opt.flag_prefix = "--";
  CHECK_THROWS_WITH(plot_figure(d, PlotHints{}, opt), Contains("(--y)"));
  opt.diff = "nocolon";
  CHECK_THROWS_WITH(plot_figure(d, PlotHints{}, opt), Contains("--diff:"));
}

// A heat map says what its colour bar shows (both columns of a difference) and what a blank
// (grey) cell means.
TEST_CASE("plot: heat-map colour bar label and the note on blank cells", "[tools][plot]") {
  std::string text = "# saddle 1\n# sweep: c, gamma\nc,gamma,error,error_ridge,converged\n";
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      text += std::to_string(0.5 + i) + "," + std::to_string(j + 1) + ",0.3,0.2," + (i == 2 && j == 2 ? "0" : "1") + "\n";
  TempCsv f(text);
  PlotOptions opt;
  opt.z = "error-error_ridge";
  const gnuplot::Figure fig = plot_figure(read_csv(f.str()), PlotHints{}, opt);
  REQUIRE(fig.heat);
  CHECK(fig.heat_map.diverging);
  CHECK_THAT(fig.heat_map.z.text, Contains("interpolation error minus ridge interpolation error"));
  REQUIRE(fig.notes.size() == 1);
  CHECK_THAT(fig.notes[0], Contains("grey") && Contains("did not converge"));
  std::size_t blank = 0;
  for (const auto& c : fig.heat_map.cells) blank += std::isnan(c[2]) ? 1 : 0;
  CHECK(blank == 1);
}

// Every style, a value above ymax (arrow and label), a lone point of a line and notes give a
// script gnuplot accepts (a PNG is written).
TEST_CASE("gnuplot: clipped values, lone points, dashes and notes draw", "[tools][plot]") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return;  // tests/cli checks gnuplot
  gnuplot::Figure fig;
  fig.logy = true;
  fig.ymax = 10;
  fig.notes = {"linear: no theory point at alpha = 4 (the fixed point did not converge)"};
  fig.series.push_back({"theory", gnuplot::Style::Line, 0, {{1, 1, 0}, {2, 0.8, 0}, {NAN, NAN, NAN}, {3, 0.7, 0}}});
  fig.series.push_back({"unstable", gnuplot::Style::OpenCircles, 0, {{2.5, 12.96, 0}}});
  fig.series.push_back({"replica", gnuplot::Style::Dashes, 1, {{1, 1.05, 0}, {3, 0.72, 0}}});
  fig.series.push_back({"simulation", gnuplot::Style::ErrorBars, 1, {{1, 1.1, 0.01}, {3, 0.71, 0.02}}});
  fig.series.push_back({"", gnuplot::Style::DashedLine, -1, {{1, 0.5, 0}, {3, 0.4, 0}}});
  TempCsv png("");
  gnuplot::draw(fig, png.str());
  CHECK(std::filesystem::file_size(png.path) > 1000);
}

// A comparison table (validate) is drawn as the z of each comparison: simulation rows only,
// numbered in file order, one series per verdict with its count, and the band |z| <= 4; a row
// without a z is counted in a note, not drawn.
TEST_CASE("plot: a validation table draws z per comparison with the pass band", "[tools][plot]") {
  TempCsv f("# saddle 1\ncase,quantity,source,value,se,z,verdict\n"
            "a,m,theory,0.5,0,,pass\na,m,mc,0.51,0.01,1.2,pass\n"
            "a,q,theory,0.2,0,,FAIL\na,q,mc,0.3,0.01,-9.5,FAIL\n"
            "b,m,theory,0.4,0,,pass\nb,m,mc,0.39,0.01,-0.3,pass\n"
            "b,q,mc,nan,0,,rsb_unconverged\n");
  const gnuplot::Figure fig = plot_figure(read_csv(f.str()), PlotHints{}, PlotOptions{});
  REQUIRE(fig.series.size() == 4);  // pass, FAIL, the band's two lines
  CHECK(fig.series[0].title == "pass (2)");
  CHECK(fig.series[0].points[0][0] == 1.0);
  CHECK(fig.series[0].points[1][0] == 3.0);  // the third comparison in file order
  CHECK(fig.series[0].points[1][1] == -0.3);
  CHECK(fig.series[1].title == "FAIL (1)");
  CHECK(fig.series[1].style == gnuplot::Style::Crosses);
  CHECK(fig.series[1].points[0][1] == -9.5);
  CHECK(fig.series[2].points[0][1] == 4.0);
  CHECK(fig.series[3].points[1][1] == -4.0);
  CHECK(fig.ymin < -9.5);  // the largest |z| is on the axes
  REQUIRE(fig.notes.size() == 2);
  CHECK_THAT(fig.notes[1], Contains("1 comparison(s) without a z"));
  // Asked for a column, the usual curves.
  PlotOptions opt;
  opt.y = "value";
  opt.x = "se";
  CHECK(plot_figure(read_csv(f.str()), PlotHints{}, opt).series.front().style != gnuplot::Style::Points);
}
