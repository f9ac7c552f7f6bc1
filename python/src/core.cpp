// saddle._core: the compiled half of the Python module. It runs the `saddle` program in-process
// (saddle::run_cli, the same code as the CLI) on an argument vector built by python/saddle, with
// the GIL released, and describes the program's options so that the Python functions take the
// CLI's names, defaults and descriptions without a copy of them.
//
// Ctrl-C: the command runs on a worker thread while the calling thread waits in steps of 100 ms;
// between steps it takes the GIL and calls PyErr_CheckSignals. A pending KeyboardInterrupt sets
// the process-wide interrupt flag (solver/interrupt.hpp), which the runner and the iteration loops
// poll; once the worker has stopped, the KeyboardInterrupt is raised. The same steps report the
// progress counters to an optional Python callback.
//
// SIGTERM (a batch system ending the job): where the process leaves SIGTERM at its default, a
// handler is installed for the call that stops the command the same way; the Python side then
// removes its temporary file and calls end_if_terminated(), which ends the process by SIGTERM
// (the default action), so no `except KeyboardInterrupt` can swallow a kill.
//
// Locale: the command runs with the "C" locale on its thread (uselocale), whatever
// locale.setlocale() the host chose; numbers in and out are locale-free anyway
// (tools/cli/number_text.hpp), which also covers the OpenMP threads.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <locale.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "saddle_version.hpp"
#include "solver/interrupt.hpp"
#include "tools/cli/app.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/cli/model_command.hpp"

namespace py = pybind11;

namespace {

volatile sig_atomic_t g_terminated = 0;
extern "C" void on_terminate(int) {
  g_terminated = 1;
  saddle::request_interrupt();  // a lock-free atomic store: async-signal-safe
  ::signal(SIGTERM, SIG_DFL);   // a second SIGTERM ends the process at once
}

// For the duration of a call: SIGTERM stops the command (above), where its disposition is the
// default; a handler of the host's own (signal.signal in Python) or SIG_IGN is left alone.
class TerminateGuard {
 public:
  TerminateGuard() {
    g_terminated = 0;
    struct sigaction old {};
    if (::sigaction(SIGTERM, nullptr, &old) != 0) return;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) return;
    struct sigaction act {};
    act.sa_handler = on_terminate;
    sigemptyset(&act.sa_mask);
    installed_ = ::sigaction(SIGTERM, &act, &old_) == 0;
  }
  ~TerminateGuard() {
    if (installed_) ::sigaction(SIGTERM, &old_, nullptr);
  }
  TerminateGuard(const TerminateGuard&) = delete;
  TerminateGuard& operator=(const TerminateGuard&) = delete;

 private:
  struct sigaction old_ {};
  bool installed_ = false;
};

// Called by the Python side after its cleanup: when the last call was stopped by SIGTERM, ends
// the process with SIGTERM (its default action), as the signal would have without the call.
void end_if_terminated() {
  if (!g_terminated) return;
  std::fflush(nullptr);
  ::signal(SIGTERM, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::kill(::getpid(), SIGTERM);
  ::raise(SIGTERM);
  ::_exit(128 + SIGTERM);  // not reached unless SIGTERM is blocked by another thread's mask
}

std::mutex& run_mutex() {  // one command at a time: the command line and the flags are global
  static std::mutex m;
  return m;
}

// Runs args (args[0] = "saddle"); returns (exit code, error message). Raises KeyboardInterrupt
// (or the progress callback's exception) after stopping the command.
py::tuple run(const std::vector<std::string>& args, const py::object& progress, double poll_s) {
  int rc = 0;
  std::string message;
  std::unique_ptr<py::error_already_set> pending;  // destroyed with the GIL held
  TerminateGuard terminate_guard;
  {
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> exclusive(run_mutex());
    saddle::clear_interrupt();
    saddle::progress_counters().done = 0;
    saddle::progress_counters().total = 0;
    std::mutex mu;
    std::condition_variable cv;
    bool finished = false;
    std::thread worker([&] {
      int code = 0;
      std::string msg;
      const locale_t c_locale = ::newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
      const locale_t previous = c_locale ? ::uselocale(c_locale) : static_cast<locale_t>(nullptr);
      try {
        code = saddle::run_cli(args, &msg);
      } catch (const std::exception& e) {  // run_cli catches everything; this is a last guard
        code = 1;
        msg = std::string("saddle: error: ") + e.what();
      }
      if (c_locale) {
        ::uselocale(previous);
        ::freelocale(c_locale);
      }
      std::lock_guard<std::mutex> lock(mu);
      rc = code;
      message = msg;
      finished = true;
      cv.notify_all();
    });
    const auto step = std::chrono::duration<double>(poll_s > 0 ? poll_s : 0.1);
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (cv.wait_for(lock, step, [&] { return finished; })) break;
      }
      if (pending) continue;  // stopping: just wait for the worker
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {
        pending = std::make_unique<py::error_already_set>();
        saddle::request_interrupt();
        continue;
      }
      // Stopping (a SIGTERM or another stop request): no more progress calls. A callback called
      // again could send a second SIGTERM, which ends the process at once (on_terminate), before
      // the Python side removed its temporary file.
      if (!progress.is_none() && !g_terminated && !saddle::interrupt_requested()) {
        try {
          progress(saddle::progress_counters().done.load(), saddle::progress_counters().total.load());
        } catch (py::error_already_set& e) {
          pending = std::make_unique<py::error_already_set>(std::move(e));
          saddle::request_interrupt();
        }
      }
    }
    worker.join();
    saddle::clear_interrupt();
  }
  if (pending) throw std::move(*pending);
  if (!progress.is_none() && rc == 0 && !g_terminated)  // the final count (the last step may have come before it)
    progress(saddle::progress_counters().done.load(), saddle::progress_counters().total.load());
  return py::make_tuple(rc, message);
}

// The options of one (sub)command: list of dicts with name (long, without dashes), flag,
// description, default (the CLI's default text, "" when none), group.
py::list describe_options(const CLI::App* app) {
  py::list out;
  for (const CLI::Option* o : app->get_options()) {
    if (o->get_positional() || o->get_lnames().empty()) continue;
    py::dict d;
    d["name"] = o->get_lnames().front();
    d["flag"] = o->get_items_expected_max() == 0;
    d["description"] = o->get_description();
    d["default"] = o->get_default_str();
    d["group"] = o->get_group();
    out.append(d);
  }
  return out;
}

void describe_tree(CLI::App* app, const std::string& path, py::dict& out) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    const std::string p = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    py::dict d;
    d["description"] = sub->get_description();
    d["options"] = describe_options(sub);
    out[py::str(p)] = d;
    describe_tree(sub, p, out);
  }
}

// {"slr population": {"description": ..., "options": [...]}, ...} for every subcommand.
py::dict describe() {
  std::unique_ptr<CLI::App> app = saddle::make_app();
  py::dict out;
  describe_tree(app.get(), "", out);
  return out;
}

// Every model registered with register_model<M> (tools/cli/models.cpp), as its card: the Python
// module makes one function per model from these (python/saddle/_models.py).
py::list models() {
  py::list out;
  for (const saddle::ModelCard& c : saddle::registered_model_cards()) {
    py::dict d;
    d["command"] = c.command;
    d["summary"] = c.summary;
    d["equations"] = c.equations;
    d["observables_note"] = c.observables_note;
    d["continuation"] = c.continuation;
    d["plot_y"] = c.plot_y;
    d["target_se"] = c.target_se;
    py::list params;
    for (const saddle::ModelParam& p : c.params) {
      py::dict q;
      q["name"] = p.name;
      q["default"] = p.default_text;
      q["help"] = p.help;
      q["min"] = p.domain.min;
      q["min_inclusive"] = p.domain.min_inclusive;
      q["max"] = p.domain.max;
      q["max_inclusive"] = p.domain.max_inclusive;
      q["integer"] = p.domain.integer;
      q["allow_inf"] = p.domain.allow_inf;
      py::list choices;
      for (const std::string& ch : p.choices) choices.append(ch);
      q["choices"] = choices;
      params.append(q);
    }
    d["params"] = params;
    py::list settings;
    for (const saddle::ModelSetting& st : c.settings) {
      py::dict q;
      q["name"] = st.name;
      q["help"] = st.help;
      q["replaces"] = st.replaces;
      settings.append(q);
    }
    d["settings"] = settings;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Compiled core of the saddle Python module: runs the saddle CLI in-process.";
  m.attr("version") = SADDLE_VERSION;
  m.attr("interrupted_exit") = saddle::kExitInterrupted;
  m.def("build_features", &saddle::build_features, "Build features, as in `saddle --version`.");
  m.def("run", &run, py::arg("args"), py::arg("progress") = py::none(), py::arg("poll_s") = 0.1,
        "Run the saddle program on args (args[0] = 'saddle') with the GIL released; returns "
        "(exit code, error message). Ctrl-C stops it and raises KeyboardInterrupt.");
  m.def("end_if_terminated", &end_if_terminated,
        "After a call stopped by SIGTERM: end the process by SIGTERM (call after cleanup).");
  m.def("describe", &describe, "Subcommands of the saddle program and their options.");
  m.def("models", &models,
        "Every model registered with register_model (tools/cli/models.cpp): command, summary, "
        "equations, continuation, parameters with default, help and domain (or choices), "
        "settings.");
}
