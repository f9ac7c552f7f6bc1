// The panels of `saddle figures` (tools/figures/cmd_figures.cpp), one entry per panel: its parameters
// (`params`: full mode; `quick`: overrides for --quick) and the subcommand runs that make its
// curves and markers. To change a panel, edit its `params` line or pass --set KEY=VALUE
// (e.g. `saddle figures --only slr_fig1 --set Ls=2,10`, `--set lambda=0.01`).
//
// Settings: where the papers' values are known (from the issue) they are used; the rest are ours
// and are listed in docs/figures.md. A run's {key} is a parameter, {each:key} repeats the run over
// the list key. Sources: theory (solid line), bayes (dashed), replica (the replica prediction at
// the markers' finite alpha: crosses), mc (simulation markers with error bars; `ref` = the source
// its z-scores are computed against).
#include "tools/figures/figures_panels.hpp"

namespace saddle {

namespace {

// Population-risk panels (SLR Fig. 1, 2): trained-attention markers at large alpha, best lambda of
// a small grid, compared with the replica prediction at that alpha and lambda (L <= 4, softmax
// and linear; no replica exists for erf / softplus).
const char* kSlrSim =
    "alpha_sim=100 D=100 seeds=4 lambdas=0.01,0.1 points=1024 reps=4";
const char* kSlrSimQuick =
    "alpha_sim=40 D=80 seeds=3 lambdas=0.1 points=512 reps=2";

std::vector<Panel> make_panels() {
  std::vector<Panel> p;

  // ---------------- SLR paper (arXiv 2509.21936) ----------------
  p.push_back({"slr_fig1", "SLR Fig. 1: population risk, spiked SLR, softmax vs linear attention",
               "signal strength {/Symbol n}", "population risk", false, false,
               std::string("Ls=2,3 nu=0:5:26 nu_sim=1,2,3,4 ") + kSlrSim,
               std::string("nu=0:5:6 nu_sim=2 ") + kSlrSimQuick,
               {{"theory", "{activation} (L={L})", "nu", "risk", "",
                 "slr population --task spiked --L {Ls} --nu {nu} --activation softmax,linear"},
                {"bayes", "Bayes (L={L})", "nu", "bayes_risk", "",
                 "slr population --task spiked --L {Ls} --nu {nu} --activation softmax,linear"},
                {"replica", "{activation} (L={L})", "nu", "test_error", "test_error_se",
                 "slr erm --task spiked --L {Ls} --nu {nu_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--activation softmax,linear --points {points} --replicates {reps}"},
                {"mc", "{activation} (L={L})", "nu", "test_error", "test_error_se",
                 "mc slr --task spiked --L {each:Ls} --nu {nu_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--D {D} --seeds {seeds} --activation softmax,linear",
                 "replica", "min"}}});

  p.push_back({"slr_fig2a", "SLR Fig. 2a: population risk, spiked SLR, L = 2, four attentions",
               "signal strength {/Symbol n}", "population risk", false, false,
               std::string("L=2 nu=0:5:26 nu_sim=1,2,3,4 ") + kSlrSim,
               std::string("nu=0:5:6 nu_sim=2 ") + kSlrSimQuick,
               {{"theory", "{activation}", "nu", "risk", "",
                 "slr population --task spiked --L {L} --nu {nu} --activation softmax,linear,erf,softplus"},
                {"bayes", "Bayes", "nu", "bayes_risk", "",
                 "slr population --task spiked --L {L} --nu {nu} --activation softmax,linear,erf,softplus"},
                {"replica", "{activation}", "nu", "test_error", "test_error_se",
                 "slr erm --task spiked --L {L} --nu {nu_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--activation softmax,linear --points {points} --replicates {reps}"},
                {"mc", "{activation}", "nu", "test_error", "test_error_se",
                 "mc slr --task spiked --L {L} --nu {nu_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--D {D} --seeds {seeds} --activation softmax,linear,softplus",
                 "replica", "min"}}});

  p.push_back({"slr_fig2b", "SLR Fig. 2b: population risk, max-SLR at nu = infinity, against L",
               "sequence length L", "population risk", true, false,
               std::string("Ls=2,3,5,10,20,50,100,200,500,1000,2000,5000,10000 L_sim=2,3,10 L_rep=2,3 ") + kSlrSim,
               std::string("Ls=2,10,100,1000,10000 L_sim=2 L_rep=2 ") + kSlrSimQuick,
               {{"theory", "{activation}", "L", "risk", "",
                 "slr population --task max --nu inf --L {Ls} --activation softmax,linear,erf,softplus"},
                {"bayes", "Bayes (0 at nu = inf)", "L", "bayes_risk", "",
                 "slr population --task max --nu inf --L {Ls} --activation softmax,linear,erf,softplus"},
                {"replica", "{activation}", "L", "test_error", "test_error_se",
                 "slr erm --task max --nu inf --L {L_rep} --alpha {alpha_sim} --lambda {lambdas} "
                 "--activation softmax,linear --points {points} --replicates {reps}"},
                {"mc", "{activation}", "L", "test_error", "test_error_se",
                 "mc slr --task max --nu inf --L {each:L_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--D {D} --seeds {seeds} --activation softmax,linear,softplus",
                 "replica", "min"}}});

  p.push_back({"slr_fig2c", "SLR Fig. 2c: population risk, max-SLR, L uniform on {1,2,3}",
               "signal strength {/Symbol n}", "population risk", false, false,
               std::string("Ldist=1,2,3 nu=0:5:26 nu_sim=1,2,3,4 ") + kSlrSim,
               std::string("nu=0:5:6 nu_sim=2 ") + kSlrSimQuick,
               {{"theory", "{activation}", "nu", "risk", "",
                 "slr population --task max --L-dist {Ldist} --nu {nu} --activation softmax,linear,erf,softplus"},
                {"bayes", "Bayes", "nu", "bayes_risk", "",
                 "slr population --task max --L-dist {Ldist} --nu {nu} --activation softmax,linear,erf,softplus"},
                {"replica", "{activation}", "nu", "test_error", "test_error_se",
                 "slr erm --task max --L-dist {Ldist} --nu {nu_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--activation softmax,linear --points {points} --replicates {reps}"},
                {"mc", "{activation}", "nu", "test_error", "test_error_se",
                 "mc slr --task max --L-dist {Ldist} --nu {nu_sim} --alpha {alpha_sim} --lambda {lambdas} "
                 "--D {D} --seeds {seeds} --activation softmax,linear,softplus",
                 "replica", "min"}}});

  // Fig. 3: test error of ridge ERM against alpha (replica, informed start), Bayes-optimal error,
  // direct ERM at finite D: the lowest-loss of the minima L-BFGS reaches from the informed start
  // and restarts - 1 random starts (the zero-temperature replica describes the global minimiser;
  // at small alpha the informed start alone ends in a higher-loss minimum, docs/figures.md).
  // Theory points are drawn RS-unstable where their row says rs_stability = unstable (the replicon
  // or the jump term of the proximal minimiser, docs/figures.md).
  const char* fig3 =
      "L=3 lambda=0.1 alpha=0.5:8:16 alpha_sim=0.5,1,2,3,4,6,8 D=300 seeds=8 restarts=8 points=1024 reps=4";
  const char* fig3q = "alpha=1,2,3,4,5,6 alpha_sim=6 D=200 seeds=3 restarts=3 points=1024 reps=2";
  // The nu = 2 panel also draws the reference of the RS-unstable windows (compiled in from
  // data/validation/erm_inf: no run, so --quick draws it too): the 1RSB fixed point where RS is
  // unstable, and ERM extrapolated to D = inf, compared with the 1RSB point at the same alpha.
  auto fig3_runs = [](bool reference) {
    std::vector<FigureRun> runs{
        {"theory", "{activation}", "alpha", "test_error", "test_error_se",
         "slr erm --task {task} --L {L} --nu {nu} --lambda {lambda} --alpha {alpha} --activation softmax,linear "
         "--init informed --points {points} --replicates {reps}"},
        {"bayes", "Bayes-optimal", "alpha", "test_error", "test_error_se",
         "slr bayes --task {task} --L {L} --nu {nu} --alpha {alpha} --init informed --points {points} "
         "--replicates {reps}"},
        {"mc", "{activation}", "alpha", "test_error", "test_error_se",
         "mc slr --task {task} --L {L} --nu {nu} --lambda {lambda} --alpha {alpha_sim} --D {D} --seeds {seeds} "
         "--activation softmax,linear --init informed --restarts {restarts} --keep lowest",
         "theory"}};
    if (reference) {
      runs.push_back({"rsb", "{activation}", "alpha", "test_error", "test_error_se", "reference 1rsb"});
      runs.push_back(
          {"erm_inf", "{activation}", "alpha", "test_error", "test_error_se", "reference erm_inf", "rsb"});
    }
    return runs;
  };
  p.push_back({"slr_fig3_nu1", "SLR Fig. 3: ridge ERM test error, spiked SLR, nu = 1, L = 3",
               "sample ratio {/Symbol a} = N/D", "test error", false, true,
               std::string("task=spiked nu=1 ") + fig3, fig3q, fig3_runs(false)});
  p.push_back({"slr_fig3_nu2", "SLR Fig. 3: ridge ERM test error, spiked SLR, nu = 2, L = 3",
               "sample ratio {/Symbol a} = N/D", "test error", false, true,
               std::string("task=spiked nu=2 ") + fig3, fig3q, fig3_runs(true)});
  p.push_back({"slr_fig3_max", "SLR Fig. 3: ridge ERM test error, max-SLR, nu = infinity, L = 3",
               "sample ratio {/Symbol a} = N/D", "test error", false, true,
               std::string("task=max nu=inf ") + fig3, fig3q, fig3_runs(false)});

  // ---------------- RMT paper (arXiv 2506.18656) ----------------
  // Fig. 1: ridge regression, deterministic equivalent (rmt ridge) against simulation (mc rmt).
  p.push_back({"rmt_fig1a", "RMT Fig. 1a: ridge interpolation error against gamma (p = 2048, n = 512, |mu|^2 = 1)",
               "ridge {/Symbol g}", "interpolation error", true, true,
               "n=512 c=4 snr=1 gamma=1e-6:10:29:log gamma_sim=1e-6:10:8:log draws=8",
               "n=128 gamma_sim=1e-5:1:6:log draws=4",
               {{"theory", "ridge", "gamma", "error", "", "rmt ridge --c {c} --gamma {gamma} --snr {snr}"},
                {"mc", "ridge", "gamma", "mean", "se",
                 "mc rmt --n {n} --c {c} --gamma {gamma_sim} --snr {snr} --model ridge --draws {draws}", "theory"}}});
  p.push_back({"rmt_fig1b", "RMT Fig. 1b: ridge interpolation error against p (gamma = 1e-5, |mu|^2 = 1)",
               "number of features p (n = {n})", "interpolation error", true, true,
               "n=1024 gamma=1e-5 snr=1 c=0.05:4:60:log c_sim=0.1,0.25,0.5,0.8,1.25,2,3 draws=6",
               "n=256 c_sim=0.25,0.5 draws=4",
               {{"theory", "ridge", "c*{n}", "error", "", "rmt ridge --c {c} --gamma {gamma} --snr {snr}"},
                {"mc", "ridge", "p", "mean", "se",
                 "mc rmt --n {n} --c {c_sim} --gamma {gamma} --snr {snr} --model ridge --draws {draws}", "theory"}}});
  p.push_back({"rmt_fig1c", "RMT Fig. 1c: ridge interpolation error against |mu|^2 (p = 512, n = 2048, gamma = 1e-5)",
               "signal strength |{/Symbol m}|^2", "interpolation error", false, false,
               "n=2048 c=0.25 gamma=1e-5 snr=0:4:21 snr_sim=0,1,2,3,4 draws=6",
               "n=256 snr_sim=0,2,4 draws=4",
               {{"theory", "ridge", "snr", "error", "", "rmt ridge --c {c} --gamma {gamma} --snr {snr}"},
                {"mc", "ridge", "snr", "mean", "se",
                 "mc rmt --n {n} --c {c} --gamma {gamma} --snr {snr_sim} --model ridge --draws {draws}", "theory"}}});

  // Fig. 2: the same axes with tanh attention, weights aligned (w_K = w_Q = mu-hat) or zero.
  auto fig2_runs = [](const std::string& x, const std::string& xsim, const std::string& sweep_th,
                      const std::string& sweep_sim) {
    const std::string th = "rmt attention " + sweep_th + " --activation {act}";
    const std::string mc = "mc rmt --n {n} " + sweep_sim + " --activation {act} --draws {draws}";
    return std::vector<FigureRun>{
        {"theory", "{activation} (w_K = w_Q = 0)", x, "error", "", th},
        {"theory", "{activation} (w_K = w_Q = mu-hat)", x, "error", "", th + " --wk 1,0,0 --wq 1,0,0"},
        {"theory", "ridge", x, "error_ridge", "", th},
        {"mc", "{activation} (w_K = w_Q = 0)", xsim, "mean", "se", mc + " --model true,ridge", "theory", "",
         "model=true"},
        {"mc", "{activation} (w_K = w_Q = mu-hat)", xsim, "mean", "se", mc + " --model true --wk 1,0,0 --wq 1,0,0",
         "theory"},
        {"mc", "ridge", xsim, "mean", "se", mc + " --model true,ridge", "theory", "", "model=ridge"}};
  };
  p.push_back({"rmt_fig2a", "RMT Fig. 2a: tanh attention and ridge against gamma (p = 2048, n = 512, |mu|^2 = 1)",
               "ridge {/Symbol g}", "interpolation error", true, true,
               "act=tanh n=512 c=4 snr=1 gamma=1e-6:10:29:log gamma_sim=1e-6:10:8:log draws=8",
               "n=128 gamma_sim=1e-5:1:6:log draws=4",
               fig2_runs("gamma", "gamma", "--c {c} --gamma {gamma} --snr {snr}",
                         "--c {c} --gamma {gamma_sim} --snr {snr}")});
  p.push_back({"rmt_fig2b", "RMT Fig. 2b: tanh attention and ridge against p (gamma = 1e-5, |mu|^2 = 1)",
               "number of features p (n = {n})", "interpolation error", true, true,
               "act=tanh n=1024 gamma=1e-5 snr=1 c=0.05:4:60:log c_sim=0.1,0.25,0.5,0.8,1.25,2,3 draws=6",
               "n=256 c_sim=0.25,0.5 draws=4",
               fig2_runs("c*{n}", "p", "--c {c} --gamma {gamma} --snr {snr}",
                         "--c {c_sim} --gamma {gamma} --snr {snr}")});
  p.push_back({"rmt_fig2c", "RMT Fig. 2c: tanh attention and ridge against |mu|^2 (p = 512, n = 2048, gamma = 1e-5)",
               "signal strength |{/Symbol m}|^2", "interpolation error", false, false,
               "act=tanh n=2048 c=0.25 gamma=1e-5 snr=0:4:21 snr_sim=0,1,2,3,4 draws=6",
               "n=512 snr_sim=0,0.5 draws=8",
               fig2_runs("snr", "snr", "--c {c} --gamma {gamma} --snr {snr}",
                         "--c {c} --gamma {gamma} --snr {snr_sim}")});

  // Activations: attention's error against c, w_K = w_Q = mu-hat, beside ridge.
  p.push_back({"rmt_activations", "RMT: attention error against c = p/n for six activations, beside ridge",
               "c = p/n", "interpolation error", true, true,
               "acts=tanh,relu,erf,sigmoid,cos,texp:2 gamma=1e-2 snr=1 c=0.05:4:40:log c_sim=0.1,0.3,1,3 n=512 "
               "draws=6",
               "c_sim=0.5,2 n=256 draws=8",
               {{"theory", "{activation}", "c", "error", "",
                 "rmt attention --c {c} --gamma {gamma} --snr {snr} --activation {acts} --wk 1,0,0 --wq 1,0,0"},
                {"theory", "ridge", "c", "error_ridge", "",
                 "rmt attention --c {c} --gamma {gamma} --snr {snr} --activation {acts} --wk 1,0,0 --wq 1,0,0"},
                {"mc", "{activation}", "c", "mean", "se",
                 "mc rmt --n {n} --c {c_sim} --gamma {gamma} --snr {snr} --activation {acts} --wk 1,0,0 --wq 1,0,0 "
                 "--model true,ridge --draws {draws}",
                 "theory", "", "model=true"},
                {"mc", "ridge", "c", "mean", "se",
                 "mc rmt --n {n} --c {c_sim} --gamma {gamma} --snr {snr} --activation {acts} --wk 1,0,0 --wq 1,0,0 "
                 "--model true,ridge --draws {draws}",
                 "theory", "", "model=ridge"}}});

  // Alignment: error against |w| for w_K = w_Q = |w| mu-hat. Besides the true kernel at n (compared
  // with the DE), two series not compared (no theory curve of their own): the true kernel at a
  // larger n_big and the Gaussian-equivalent surrogate at n, which separate the true kernel's
  // finite-size departure at large |w| (controlled by |w|^2 (1 + |mu|^2)/sqrt(p), docs/rmt.md
  // finding 5) from the DE.
  p.push_back({"rmt_alignment", "RMT: tanh attention error against the alignment |w|, w_K = w_Q = |w| mu-hat",
               "alignment strength |w|", "interpolation error", false, false,
               "act=tanh c=0.5 gamma=1e-2 snr=1 ws=0:3:25 ws_sim=0,0.5,1,1.5,2,3 n=512 draws=24 "
               "ws_big=0,1,2,3 n_big=2048 draws_big=6",
               "ws=0:3:7 ws_sim=0,1 n=256 draws=6 ws_big=3 n_big=512 draws_big=4",
               {{"theory", "{activation}", "@each", "error", "",
                 "rmt attention --c {c} --gamma {gamma} --snr {snr} --activation {act} --wk {each:ws},0,0 "
                 "--wq {each:ws},0,0"},
                {"theory", "ridge", "@each", "error_ridge", "",
                 "rmt attention --c {c} --gamma {gamma} --snr {snr} --activation {act} --wk {each:ws},0,0 "
                 "--wq {each:ws},0,0"},
                {"mc", "{activation}", "@each", "mean", "se",
                 "mc rmt --n {n} --c {c} --gamma {gamma} --snr {snr} --activation {act} --wk {each:ws_sim},0,0 "
                 "--wq {each:ws_sim},0,0 --model true,surrogate --draws {draws}",
                 "theory", "", "model=true"},
                {"mc", "{activation} Gaussian-equivalent surrogate (n = {n}; not compared)", "@each", "mean", "se",
                 "mc rmt --n {n} --c {c} --gamma {gamma} --snr {snr} --activation {act} --wk {each:ws_sim},0,0 "
                 "--wq {each:ws_sim},0,0 --model true,surrogate --draws {draws}",
                 "", "", "model=surrogate"},
                {"mc", "{activation} true kernel (n = {n_big}; not compared)", "@each", "mean", "se",
                 "mc rmt --n {n_big} --c {c} --gamma {gamma} --snr {snr} --activation {act} --wk {each:ws_big},0,0 "
                 "--wq {each:ws_big},0,0 --model true --draws {draws_big}",
                 ""}}});
  return p;
}

}  // namespace

const std::vector<Panel>& figure_panels() {
  static const std::vector<Panel> panels = make_panels();
  return panels;
}

}  // namespace saddle
