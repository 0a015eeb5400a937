# git_commit.cmake - run at every build (cmake -DSRC=... -DOUT=... -P git_commit.cmake): writes
# OUT, a header defining MINT_GIT_COMMIT as the source tree's short commit ("unknown" from a
# tarball or without git), and touches it only when the commit changed, so that --version names
# the commit the programs were built from without rebuilding them at every build.
set(commit unknown)
find_package(Git QUIET)
if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD
                    WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE out
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND out)
        set(commit ${out})
    endif()
endif()
set(text "// Written by tools/cmake/git_commit.cmake at build time.\n#define MINT_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
    file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
    file(WRITE ${OUT} "${text}")
endif()
