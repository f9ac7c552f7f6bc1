// The one gnuplot driver of saddle: `saddle plot`, --plot and `saddle figures` describe a figure
// as data (axes, labels, series of points, each with a style from a fixed set, or a heat map) and
// draw() turns it into a PNG. The data go to temporary files and a generated script, gnuplot is
// spawned directly (no shell) and writes the image to its stdout, which saddle opens itself: no
// path ever reaches gnuplot, and every text (title, labels, legend entries) reaches the script
// only inside a single-quoted gnuplot string, so no text from a user or a file runs as code.
#pragma once
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace saddle {
namespace gnuplot {

// A label: literal text (noenhanced), or gnuplot enhanced text ({/Symbol a}, ^{...}, _{...})
// from a trusted table (still a quoted string, never code).
struct Label {
  std::string text;
  bool enhanced = false;
};

enum class Style {
  Line,         // solid line
  LinePoints,   // solid line with small filled points (a curve broken by flagged points)
  DashedLine,   // dashed line (references: Bayes risk, ridge baseline)
  OpenCircles,  // open circles (flagged points: RS-unstable, repelling)
  Crosses,      // crosses (a prediction at the markers' x)
  ErrorBars,    // filled points with vertical error bars (simulation; se = third value)
  DashedLinePoints,  // dashed line with filled triangles (a second theory, e.g. 1RSB)
  OpenTriangles,     // open triangles (a theory point that did not converge)
  SquareErrorBars,   // filled squares with error bars (an extrapolated simulation; se = third value)
  Dashes,            // a short horizontal line at each point (a theory value at a marker's x)
  Points,            // filled points, no error bar (one value each, e.g. the z of a comparison)
};
// Simulation markers (ErrorBars, SquareErrorBars) have wide caps, so an error bar shorter than the
// marker still shows its extent. A lone point of a Line or DashedLine series (between two breaks)
// is drawn as a short horizontal line, so theory stays a line.

struct Series {
  std::string title;  // legend entry, literal text; empty: no legend entry
  Style style = Style::Line;
  int color = 0;      // index into the palette; -1: black
  // (x, y, se) per point, drawn in this order; a point with a NaN x breaks a line.
  std::vector<std::array<double, 3>> points;
};

enum class Key { TopRight, Below };

// A heat map of z over (x, y) with black contour lines labelled by their level; NaN z: a grey
// cell (no value). The colour bar is labelled `z`.
struct HeatMap {
  Label z;
  bool diverging = false;  // palette blue-white-red centred on 0 with symmetric contour levels
                           // (else a sequential dark-blue-to-yellow palette)
  std::vector<std::array<double, 3>> cells;  // (x, y, z), sorted by y then x
};

struct Figure {
  int width = 1000, height = 700;
  std::string title;  // literal
  Label x, y;
  bool logx = false, logy = false;
  bool pad = false;  // linear axes fit the data with a small margin (markers at the ends stay visible)
  Key key = Key::TopRight;
  std::vector<Series> series;
  // y range (NaN: automatic). A value outside it is not drawn: an arrow at that edge of the plot
  // points past it, labelled with the value (so nothing leaves the axes unmarked).
  double ymin = NAN, ymax = NAN;
  // Lines of literal text printed inside the plot, bottom left (e.g. what is missing and why).
  std::vector<std::string> notes;
  bool heat = false;  // draw `heat_map` instead of the series
  HeatMap heat_map;
};

// Seconds gnuplot may take for one figure (--plot-timeout) before it is killed, and the largest
// limit accepted.
constexpr double kDefaultTimeout = 60.0, kMaxTimeout = 86400.0;

// Writes `png` (a temporary file beside it, renamed onto it when complete: tools/runner/file_io.hpp);
// throws InputError if it cannot be written (not a regular file), gnuplot is missing, fails (with
// gnuplot's first message) or takes longer than `timeout` seconds (then it is killed), or there
// is nothing to draw, and Interrupted when interrupted meanwhile. A failure leaves `png` as it was
// and no temporary file behind.
void draw(const Figure& figure, const std::string& png, double timeout = kDefaultTimeout);

// Before computing what a figure shows: throws InputError when gnuplot is not on PATH or no
// temporary file can be made in $TMPDIR (or /tmp).
void check_ready();
// Throws InputError naming `what` unless 0 < timeout <= kMaxTimeout.
void check_timeout(double timeout, const std::string& what);

// A gnuplot single-quoted string holding `text` literally (for tests of the quoting).
std::string quoted(const std::string& text);

}  // namespace gnuplot
}  // namespace saddle
