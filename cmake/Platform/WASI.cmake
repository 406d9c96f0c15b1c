# WASI (wasm32-wasi) for CMake versions without a Platform/WASI module (before 3.28). The toolchain
# platform/cmake/wasm32-wasi.cmake puts cmake/ on CMAKE_MODULE_PATH so that CMake finds this file.
# Programs are WebAssembly modules (.wasm) run by a WASI host (tests/wasi_run.mjs under Node);
# libraries are static archives only.
set(WASI 1)
set(CMAKE_EXECUTABLE_SUFFIX ".wasm")
set(CMAKE_STATIC_LIBRARY_PREFIX "lib")
set(CMAKE_STATIC_LIBRARY_SUFFIX ".a")
set(CMAKE_FIND_LIBRARY_PREFIXES "lib")
set(CMAKE_FIND_LIBRARY_SUFFIXES ".a")
set_property(GLOBAL PROPERTY TARGET_SUPPORTS_SHARED_LIBS FALSE)
# The usual prefixes (/usr, /usr/local, /), which find_* re-roots under CMAKE_FIND_ROOT_PATH
# (build.py points it at the cross-built cmocka); never the host's own directories.
include(Platform/UnixPaths)
