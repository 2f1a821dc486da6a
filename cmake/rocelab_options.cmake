# Warnings and sanitizers for rocelab's own targets only (third-party headers are
# included as SYSTEM, so -Werror never fires on them).
add_library(rocelab_warnings INTERFACE)
target_compile_options(rocelab_warnings INTERFACE -Wall -Wextra -Werror)
# At -O3, GCC 12 (Debian 12's compiler) reports flow-sensitive warnings on code it has
# unrolled or inlined that cannot run: -Wrestrict inside libstdc++'s own string
# concatenation (GCC bug 105651), -Wstringop-overflow and -Warray-bounds past a std::array
# that a range-for never leaves. They failed every Release build. The -O2 build (scripts/
# setup, CI) keeps all of them as errors.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(rocelab_warnings INTERFACE
    $<$<CONFIG:Release>:-Wno-restrict -Wno-stringop-overflow -Wno-stringop-overread -Wno-array-bounds>)
endif()

if(ROCELAB_SANITIZE OR ROCELAB_FUZZ)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(ROCELAB_FUZZ)
  # Coverage instrumentation for everything the fuzz targets link; the targets add
  # -fsanitize=fuzzer (the driver) themselves.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# rocelab_library(<folder> [SOURCES...]) declares the folder's library target
# rocelab_<folder> with its alias rocelab::<folder> and public include/ directory.
function(rocelab_library folder)
  add_library(rocelab_${folder} ${ARGN})
  add_library(rocelab::${folder} ALIAS rocelab_${folder})
  if("INTERFACE" IN_LIST ARGN)
    target_include_directories(rocelab_${folder} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  else()
    target_include_directories(rocelab_${folder} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_link_libraries(rocelab_${folder} PRIVATE rocelab_warnings)
  endif()
endfunction()

# An adapter target (hardware or optional C library) beside a folder's core library.
function(rocelab_adapter name)
  add_library(rocelab_${name} ${ARGN})
  add_library(rocelab::${name} ALIAS rocelab_${name})
  target_link_libraries(rocelab_${name} PRIVATE rocelab_warnings)
endfunction()

# rocelab_lto(<library>): link-time optimisation for a hot-path static library, off for
# fuzz and sanitizer builds. The objects are fat (LTO bytecode and ordinary code): the CLI,
# the benchmarks and the Python module optimise across them at link time, while the test
# binaries link the ordinary code with -fno-lto (tests/CMakeLists.txt) instead of redoing
# the library's code generation in each of a hundred links.
include(CheckIPOSupported)
check_ipo_supported(RESULT rocelab_ipo_supported OUTPUT rocelab_ipo_message LANGUAGES CXX)
function(rocelab_lto target)
  if(rocelab_ipo_supported AND NOT ROCELAB_FUZZ AND NOT ROCELAB_SANITIZE)
    set_property(TARGET ${target} PROPERTY INTERPROCEDURAL_OPTIMIZATION ON)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -ffat-lto-objects)
    endif()
  endif()
endfunction()
