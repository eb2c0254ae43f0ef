#include "daemon/commands/command_line.h"

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <optional>
#include <string>

#include "daemon/base/log.h"
#include "daemon/commands/bench_command.h"
#include "daemon/commands/cameras_command.h"
#include "daemon/commands/detect_command.h"
#include "daemon/commands/eval_command.h"
#include "daemon/commands/line_commands.h"
#include "daemon/commands/npu_commands.h"
#include "daemon/commands/npu_compile.h"
#include "daemon/commands/npu_selftest.h"
#include "daemon/commands/passwd_command.h"
#include "daemon/commands/run_command.h"
#include "daemon/commands/track_commands.h"

namespace vigil {

namespace {

// The first word that is not an option, when it names no command: CLI11 would only say "A
// subcommand is required".
std::optional<std::string> unknownCommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.starts_with("-")) continue;
    for (const CLI::App* command : app.get_subcommands({})) {
      if (command->get_name() == word) return std::nullopt;
    }
    return word;
  }
  return std::nullopt;
}

std::string commandNames(const CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  return names;
}

// Every subcommand's options, filled by the parse.
struct CommandOptions {
  RunOptions run;
  CheckConfigOptions checkConfig;
  CamerasCommandOptions cameras;
  DetectCommandOptions detect;
  EvalCommandOptions eval;
  BenchCommandOptions bench;
  DoctorCommandOptions doctor;
  StageRunOptions stageRun;
  NpuSelftestOptions selftest;
  NpuCompileOptions npuCompile;
  TrackCommandOptions track;
  EvalTracksOptions evalTracks;
  PasswdOptions passwd;
  EvalLinesOptions evalLines;
};

// The subcommands with their options, in the order --help lists them; returns `npu`, which has
// a subcommand of its own.
CLI::App& addCommands(CLI::App& app, CommandOptions& o) {
  addRunCommand(app, o.run);
  addCheckConfigCommand(app, o.checkConfig);
  addCamerasCommand(app, o.cameras);
  addDetectCommand(app, o.detect);
  addEvalCommand(app, o.eval);
  addBenchCommand(app, o.bench);
  addDoctorCommand(app, o.doctor);
  addStageRunCommand(app, o.stageRun);
  CLI::App& npu = addNpuCommand(app, o.selftest);
  addNpuCompileCommand(npu, o.npuCompile);
  addTrackCommand(app, o.track);
  addEvalTracksCommand(app, o.evalTracks);
  addPasswdCommand(app, o.passwd);
  addEvalLinesCommand(app, o.evalLines);
  return npu;
}

// Runs the subcommand the parse chose: its exit status.
int runChosenCommand(const CLI::App& app, const CLI::App& npu, CommandOptions& o) {
  if (app.got_subcommand("run")) return runDaemon(o.run);
  if (app.got_subcommand("check-config")) {
    return runCheckConfigCommand(o.checkConfig, std::cout);
  }
  if (app.got_subcommand("cameras")) return runCamerasCommand(o.cameras, std::cout);
  if (app.got_subcommand("detect")) return runDetectCommand(o.detect, std::cout);
  if (app.got_subcommand("eval")) return runEvalCommand(o.eval, std::cout);
  if (app.got_subcommand("bench")) return runBenchCommand(o.bench, std::cout);
  if (app.got_subcommand("doctor")) return runDoctorCommand(o.doctor, std::cout);
  if (app.got_subcommand("track")) return runTrackCommand(o.track, std::cout);
  if (app.got_subcommand("eval-tracks")) return runEvalTracksCommand(o.evalTracks, std::cout);
  if (app.got_subcommand("passwd")) {
    return runPasswdCommand(o.passwd, std::cin, std::cout, std::cerr);
  }
  if (app.got_subcommand("eval-lines")) return runEvalLinesCommand(o.evalLines, std::cout);
  if (app.got_subcommand("stage-run")) return runStageRunCommand(o.stageRun, std::cerr);
  if (npu.got_subcommand("compile")) return runNpuCompile(o.npuCompile, std::cout, std::cerr);
  if (app.got_subcommand("npu")) return runNpuSelftest(o.selftest, std::cout);
  return 2;
}

}  // namespace

int runCommandLine(int argc, char** argv) {
  // A reader of the log or of --json output that goes away (`vigil run | head`) must not kill
  // the daemon with SIGPIPE: writes to the pipe fail with EPIPE instead, and are dropped.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Vigil: always-on person detection"};
  app.require_subcommand(1);
  app.fallthrough();  // `vigil run -v` as well as `vigil -v run`
  app.set_version_flag("--version", std::string("vigil ") + VIGIL_VERSION);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose,
               "Debug logging (vigil run: unless --log-level says; vigil doctor: also what an "
               "NPU would need on a box without one)");
  CommandOptions options;
  const CLI::App& npu = addCommands(app, options);

  if (auto word = unknownCommand(app, argc, argv)) {
    std::cerr << "vigil: unknown command '" << *word << "'; the commands are " << commandNames(app)
              << " (vigil --help says what each does)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, like the other input errors; --help and --version exit 0.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (verbose) {
    setLogLevel(spdlog::level::debug);
    // The daemon sets its level from --log-level or the file's log.level: -v is --log-level debug.
    if (options.run.logLevel.empty()) options.run.logLevel = "debug";
    options.doctor.verbose = true;
  }
  return runChosenCommand(app, npu, options);
}

}  // namespace vigil
