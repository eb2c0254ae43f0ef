"""Another script of scripts/ as a module, for its functions and constants: the scripts' names
have dashes, which `import` cannot take. From a script in scripts/ or a command run at the
repository's root:

    sys.path.insert(0, "scripts/lib")  # or this file's directory
    from script_module import load_script
    iou = load_script("track-false-boxes").iou
"""

import importlib.util
import os

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name):
    """scripts/NAME.py, its top level run as a module's (a script's main is under __main__)."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"),
                                                  os.path.join(SCRIPTS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
