// vigil: one executable, one subcommand per job. Everything but saying where this executable
// finds its model by default lives in the libraries the tests link too.
#include "daemon/base/model_location.h"
#include "daemon/commands/command_line.h"

int main(int argc, char** argv) {
  vigil::setBuiltInModelDir(VIGIL_BUILT_IN_MODEL_DIR);
  return vigil::runCommandLine(argc, argv);
}
