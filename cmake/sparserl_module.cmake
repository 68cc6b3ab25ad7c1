# One static library per src/ folder; the link graph enforces DESIGN.md's dependency direction
# (cli -> train -> {model, eval} -> {kernel, text} -> sparse).
set(SPARSERL_WARNINGS -Wall -Wextra -Werror)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 13)
  # GCC 13's -Wdangling-reference flags every function returning a reference that was passed a
  # temporary, which GoogleTest macros do all the time (false positives, fixed in GCC 14).
  list(APPEND SPARSERL_WARNINGS -Wno-dangling-reference)
endif()
if(SPARSERL_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC's flow analysis misreads ASan's instrumentation: -Wmaybe-uninitialized false positives in
  # libstdc++ (<regex>, std::function) that the plain build does not have.
  list(APPEND SPARSERL_WARNINGS -Wno-maybe-uninitialized)
endif()

function(sparserl_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT srcs)  # a module with headers only so far
    add_library(sparserl_${name} INTERFACE)
    target_include_directories(sparserl_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(sparserl_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(sparserl_${name} STATIC ${srcs})
  target_include_directories(sparserl_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(sparserl_${name} PRIVATE ${SPARSERL_WARNINGS})
  target_link_libraries(sparserl_${name} PUBLIC ${ARG_DEPS})
  sparserl_torch_pch(sparserl_${name})
endfunction()

# One GoogleTest executable per tests/<module>/test_*.cpp, so a test file builds on its own.
# LONG: the stems (test_x) of files of end-to-end tests that run for tens of seconds each; their
# tests carry the CTest label `long` (scripts/sanitize.sh can leave them out to fit CI's budget).
function(sparserl_tests module)
  cmake_parse_arguments(ARG "" "" "DEPS;LONG" ${ARGN})
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_*.cpp)
  foreach(file ${tests})
    get_filename_component(stem ${file} NAME_WE)
    set(target ${module}_${stem})
    add_executable(${target} ${file})
    target_compile_options(${target} PRIVATE ${SPARSERL_WARNINGS})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(${target} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
    target_compile_definitions(${target} PRIVATE
      SPARSERL_SOURCE_DIR="${PROJECT_SOURCE_DIR}" SPARSERL_BINARY_DIR="${PROJECT_BINARY_DIR}")
    sparserl_torch_pch(${target})
    set(labels unit)
    if(stem IN_LIST ARG_LONG)
      set(labels long)
    endif()
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600 LABELS ${labels})
  endforeach()
endfunction()

# Builds `target` without the sanitizers of SPARSERL_SANITIZE / SPARSERL_FUZZ. For the sandboxed
# children: the sanitizer runtimes need system calls their seccomp allow-lists leave out (and
# cannot follow the emulator's fiber stack switches), and the sanitizer build should test the
# real sandbox, filter included.
function(sparserl_sanitizer_exempt target)
  if(SPARSERL_SANITIZE OR SPARSERL_FUZZ)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
    target_link_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()

# Torch's headers take 10-30 s to parse in every file that includes them, most of the suite's
# build time. Files that use torch share one precompiled header of them instead (GCC only: clang
# rejects a header precompiled with other flags, where GCC falls back to parsing the original).
option(SPARSERL_TORCH_PCH "Precompile the torch headers once for every file that uses them" ON)
function(sparserl_torch_pch_owner)
  if(NOT SPARSERL_TORCH_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  add_library(sparserl_torch_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/torch_pch.cpp)
  target_compile_options(sparserl_torch_pch PRIVATE ${SPARSERL_WARNINGS})
  # The same flags as every target that uses torch (-fopenmp comes with sparserl_sparse).
  target_link_libraries(sparserl_torch_pch PRIVATE sparserl_sparse ${TORCH_LIBRARIES})
  target_precompile_headers(sparserl_torch_pch PRIVATE <torch/types.h> <torch/utils.h>
                            <torch/optim/adamw.h>)
endfunction()

# Sets `out` to ON when `file` includes a torch header, itself or through the project headers it
# includes (looked up beside it, in src/ and in tests/). Memoised across the configure run.
function(sparserl_includes_torch file out)
  get_property(known GLOBAL PROPERTY "sparserl_torch:${file}" SET)
  if(known)
    get_property(found GLOBAL PROPERTY "sparserl_torch:${file}")
    set(${out} ${found} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "sparserl_torch:${file}" OFF)  # an include cycle ends here
  file(READ ${file} text)
  set(found OFF)
  if(text MATCHES "#include <torch/")
    set(found ON)
  else()
    get_filename_component(here ${file} DIRECTORY)
    string(REGEX MATCHALL "#include \"[A-Za-z0-9_/.]+\"" includes "${text}")
    foreach(line ${includes})
      string(REGEX REPLACE "#include \"(.*)\"" "\\1" name "${line}")
      foreach(candidate ${here}/${name} ${PROJECT_SOURCE_DIR}/src/${name}
                        ${PROJECT_SOURCE_DIR}/tests/${name})
        if(EXISTS ${candidate})
          sparserl_includes_torch(${candidate} sub)
          if(sub)
            set(found ON)
          endif()
          break()
        endif()
      endforeach()
      if(found)
        break()
      endif()
    endforeach()
  endif()
  set_property(GLOBAL PROPERTY "sparserl_torch:${file}" ${found})
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Gives `target`'s sources that include torch the shared precompiled header; the others skip it
# (loading its 400 MB costs 3 s). A wrong guess costs only time, never correctness.
function(sparserl_torch_pch target)
  if(NOT TARGET sparserl_torch_pch)
    return()
  endif()
  get_target_property(srcs ${target} SOURCES)
  set(uses_torch OFF)
  foreach(src ${srcs})
    sparserl_includes_torch(${src} found)
    if(found)
      set(uses_torch ON)
    else()
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES
                                  SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  if(uses_torch)
    target_precompile_headers(${target} REUSE_FROM sparserl_torch_pch)
    # A target whose flags differ from the owner's gets GCC's warning and parses the headers.
    target_compile_options(${target} PRIVATE -Wno-error=invalid-pch)
  endif()
endfunction()
