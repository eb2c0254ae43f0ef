#pragma once

// The daemon's error vocabulary is foundation's (Error, ErrorCode, Expected, makeError): one
// vocabulary from the detector's backends up to the command line, so an error keeps its code and
// its "where and why" message as it climbs. The daemon's floors reach foundation's errors through
// this one door in base, the floor they all stand on, instead of each naming the floor below the
// daemon (scripts/check-floors.py counts the doors).
#include "foundation/error.h"
