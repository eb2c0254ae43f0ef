// vigil: one executable, one subcommand per job. Everything but argument wiring lives in the
// libraries the tests link too.
#include <CLI/CLI.hpp>
#include <iostream>

#include "daemon/commands/bench_command.h"
#include "daemon/commands/cameras_command.h"
#include "daemon/commands/detect_command.h"
#include "daemon/commands/eval_command.h"
#include "daemon/commands/npu_commands.h"
#include "daemon/commands/run_command.h"
#include "daemon/log.h"

int main(int argc, char** argv) {
  CLI::App app{"Vigil: always-on person detection"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("vigil ") + VIGIL_VERSION);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Debug logging");

  vigil::DetectCommandOptions detect;
  vigil::EvalCommandOptions eval;
  vigil::BenchCommandOptions bench;
  vigil::RunOptions run;
  vigil::CheckConfigOptions checkConfig;
  vigil::CamerasCommandOptions cameras;
  vigil::addRunCommand(app, run);
  vigil::addCheckConfigCommand(app, checkConfig);
  vigil::addCamerasCommand(app, cameras);
  vigil::addDetectCommand(app, detect);
  vigil::addEvalCommand(app, eval);
  vigil::addBenchCommand(app, bench);
  vigil::DoctorCommandOptions doctor;
  vigil::StageRunOptions stageRun;
  vigil::addDoctorCommand(app, doctor);
  vigil::addStageRunCommand(app, stageRun);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, like the other input errors; --help and --version exit 0.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (verbose) vigil::setLogLevel(spdlog::level::debug);

  if (app.got_subcommand("run")) return vigil::runDaemon(run);
  if (app.got_subcommand("check-config")) {
    return vigil::runCheckConfigCommand(checkConfig, std::cout);
  }
  if (app.got_subcommand("cameras")) return vigil::runCamerasCommand(cameras, std::cout);
  if (app.got_subcommand("detect")) return vigil::runDetectCommand(detect, std::cout);
  if (app.got_subcommand("eval")) return vigil::runEvalCommand(eval, std::cout);
  if (app.got_subcommand("bench")) return vigil::runBenchCommand(bench, std::cout);
  if (app.got_subcommand("doctor")) return vigil::runDoctorCommand(doctor, std::cout);
  if (app.got_subcommand("stage-run")) return vigil::runStageRunCommand(stageRun, std::cerr);
  return 2;
}
