// The committed reference of the RS-unstable windows (mc/slr_reference.hpp).
// The two tables between the GENERATED markers are printed by
// data/validation/erm_inf/make_table.py --cpp from the committed CSVs of that
// directory (tests/mc/test_slr_reference.cpp checks them against the CSVs);
// edit the CSVs' commands, never the numbers here.
#include "mc/slr_reference.hpp"

#include <cmath>

namespace saddle {
namespace slr {
namespace mc {

ReferenceSetting reference_setting() { return {}; }

const std::vector<ErmInfPoint> &erm_inf_reference() {
  // activation, alpha, sizes, seeds, {value, se, exponent, fit p} for
  // test_error, train_loss, train_error
  static const std::vector<ErmInfPoint> table = {
      // GENERATED erm_inf BEGIN
      {"linear", 2, "100,200,400,800", 16,
       {2.43996829457, 0.0313799966386, 1.0, 0.387039864942},
       {0.029462016761, 0.0003335993034, 1.0, 0.205070428778},
       {0.00752532228881, 0.000209083685398, 0.5, 0.118818744492}},
      {"linear", 3, "100,200,400,800", 16,
       {2.67023274503, 0.0421456985418, 1.0, 0.483157215548},
       {0.060908073339, 0.000511931312759, 1.0, 0.332244199472},
       {0.0694959327996, 0.000628717144295, 1.0, 0.671272801673}},
      {"linear", 4, "100,200,400,800", 16,
       {1.55092382937, 0.0285044393039, 1.0, 0.818844950407},
       {0.101916251862, 0.000726874821378, 1.0, 0.842479343379},
       {0.166085355712, 0.00125576889974, 1.0, 0.635653116142}},
      {"softmax", 1, "100,200,400,800", 24,
       {0.972015462974, 0.0103506019093, 1.0, 0.795990186686},
       {0.0835721045969, 0.000602952682319, 1.0, 0.826754432244},
       {0.0259684308187, 0.000252665678439, 1.0, 0.936347110757}},
      {"softmax", 2, "100,200,400,800", 24,
       {0.859163249581, 0.0120323427877, 1.0, 0.983510848947},
       {0.0859783049558, 0.000738658037334, 1.0, 0.120129677936},
       {0.0494728225031, 0.000537587917359, 1.0, 0.148326367219}},
      // GENERATED erm_inf END
  };
  return table;
}

const std::vector<RsbReferencePoint> &rsb_reference() {
  // activation, alpha, converged, residual, test_error, se, train_loss, se,
  // train_error, se, x_parisi, dq_k, dq_v
  static const std::vector<RsbReferencePoint> table = {
      // GENERATED rsb BEGIN
      {"linear", 1.5, false, 0.031746118765,
       1.7355871474, 0.00807681829772, 0.0226950127159, 0.000192322681296, 0.00291580406778, 7.65127242477e-05,
       9.8791319248, 0.140444606371, 0.0898137698218},
      {"linear", 2, false, 0.129580830536,
       2.38777681056, 0.0134489899235, 0.0283266617046, 0.000237131415323, 0.00720359685481, 0.000244918484073,
       11.4758021025, 0.331972945456, 0.160593306702},
      {"linear", 2.5, false, 0.0507142335787,
       3.17644708624, 0.0539879041462, 0.0403895288872, 0.000291616100249, 0.0244552027502, 0.000807096349589,
       6.78438770307, 0.583495921132, 0.210157181181},
      {"linear", 3, false, 0.0086770315908,
       3.03889047659, 0.118801763705, 0.0602457650961, 0.000268751305671, 0.0661777395951, 0.00129570672333,
       3.24983575642, 0.787984039254, 0.175496546734},
      {"linear", 3.5, false, 0.00763444623069,
       2.2561650338, 0.0671012853409, 0.0817561854438, 0.000573586648013, 0.116833567875, 0.00167893400973,
       1.67802570491, 0.768219127114, 0.0966973739363},
      {"linear", 4, false, 0.00735863026529,
       1.68144344301, 0.052956731158, 0.101284961972, 0.00101779109815, 0.163233079514, 0.00262208336014,
       1.04532345804, 0.536607240845, 0.0435578611766},
      {"linear", 4.5, false, 0.00460317625284,
       1.26005020527, 0.0496154842063, 0.117146337866, 0.00151286803781, 0.202183200822, 0.00382280786432,
       0.472678118911, 0.185993631894, 0.0110463078844},
      {"softmax", 1, false, 0.21053902034,
       0.977241425289, 0.00260143296098, 0.0816440390936, 0.000497142420972, 0.0244751748547, 0.000402741855709,
       11.2362207953, 0.10705670594, 0.105626375438},
      {"softmax", 2, false, 0.145035779677,
       0.852218941678, 0.0113932849387, 0.0855752569714, 0.000777739298654, 0.0483462859466, 0.00121575973257,
       7.29342555673, 0.117101876557, 0.0736651218451},
      // GENERATED rsb END
  };
  return table;
}

namespace {
bool same_alpha(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::fmax(1.0, std::fabs(a));
}
} // namespace

const ErmInfPoint *find_erm_inf(const std::string &activation, double alpha) {
  for (const auto &p : erm_inf_reference())
    if (p.activation == activation && same_alpha(p.alpha, alpha))
      return &p;
  return nullptr;
}

const RsbReferencePoint *find_rsb(const std::string &activation, double alpha) {
  for (const auto &p : rsb_reference())
    if (p.activation == activation && same_alpha(p.alpha, alpha))
      return &p;
  return nullptr;
}

} // namespace mc
} // namespace slr
} // namespace saddle
