// Carries the suites' precompiled headers (tests/CMakeLists.txt); nothing to compile.
