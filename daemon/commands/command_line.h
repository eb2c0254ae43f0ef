#pragma once

namespace vigil {

// The `vigil` command line: parses the arguments, runs the subcommand and returns the exit
// status (usage errors 2, --help and --version 0).
int runCommandLine(int argc, char** argv);

}  // namespace vigil
