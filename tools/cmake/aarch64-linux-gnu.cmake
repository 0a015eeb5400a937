# aarch64-linux-gnu.cmake - CMake toolchain file: cross-compile mint for 64-bit Arm Linux with
# Debian's gcc-aarch64-linux-gnu, and run what it builds (the Criterion tests, through ctest)
# under qemu-user.
#
#   cmake -S . -B build-neon -DCMAKE_TOOLCHAIN_FILE=tools/cmake/aarch64-linux-gnu.cmake \
#         -DMINT_AARCH64_SYSROOT=/path/to/sysroot -DMINT_TESTS=ON
#
# The libraries mint links (xxHash, json-c, and Criterion for the tests) must exist as aarch64
# builds. Two layouts work:
#   - a sysroot folder holding Debian's arm64 packages unpacked (tools/scripts/ci-neon.sh
#     makes one):
#     pass it as MINT_AARCH64_SYSROOT (or the environment variable of that name); the compiler,
#     the linker, pkg-config and qemu all look there;
#   - Debian multiarch (dpkg --add-architecture arm64, then apt-get install libfoo-dev:arm64):
#     leave MINT_AARCH64_SYSROOT unset; pkg-config then reads /usr/lib/aarch64-linux-gnu and
#     qemu finds the C library of the cross toolchain in /usr/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(MINT_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${MINT_CROSS_TRIPLE}-gcc)

# The toolchain file is read again for every try_compile and re-configure; variables given on
# the command line only reach those through the environment or this forwarding list.
if(NOT MINT_AARCH64_SYSROOT AND DEFINED ENV{MINT_AARCH64_SYSROOT})
    set(MINT_AARCH64_SYSROOT "$ENV{MINT_AARCH64_SYSROOT}")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MINT_AARCH64_SYSROOT)

if(MINT_AARCH64_SYSROOT)
    set(CMAKE_SYSROOT "${MINT_AARCH64_SYSROOT}")
    # pkg-config reads only the sysroot's .pc files and prefixes the paths it prints with it.
    set(ENV{PKG_CONFIG_SYSROOT_DIR} "${MINT_AARCH64_SYSROOT}")
    set(ENV{PKG_CONFIG_LIBDIR}
        "${MINT_AARCH64_SYSROOT}/usr/lib/${MINT_CROSS_TRIPLE}/pkgconfig:${MINT_AARCH64_SYSROOT}/usr/share/pkgconfig")
    # Shared libraries pulled in by others (libcriterion -> libgit2 -> libssh2 ...) are looked
    # up in the sysroot at link time too.
    set(CMAKE_EXE_LINKER_FLAGS_INIT
        "-Wl,-rpath-link,${MINT_AARCH64_SYSROOT}/lib/${MINT_CROSS_TRIPLE}:${MINT_AARCH64_SYSROOT}/usr/lib/${MINT_CROSS_TRIPLE}")
    set(MINT_QEMU_PREFIX "${MINT_AARCH64_SYSROOT}")
else()
    set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
    set(ENV{PKG_CONFIG_LIBDIR}
        "/usr/lib/${MINT_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
    set(MINT_QEMU_PREFIX "/usr/${MINT_CROSS_TRIPLE}")
endif()

# Search headers and libraries only in the target's folders, programs only on the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest (and add_test) run the aarch64 executables through qemu-user, with the sysroot (or the
# cross toolchain's C library) as the prefix qemu resolves the loader and libraries under.
# qemu's default CPU ("max") has every feature qemu implements, dotprod and fp16 included; set
# QEMU_CPU (e.g. cortex-a53, plain Armv8.0) in the environment to test on a CPU without them.
#
# Criterion re-executes the test binary for every test; when the host has no binfmt_misc entry
# for aarch64 that exec fails, so the tests run with tools/cmake/qemu_reexec.c preloaded, which
# routes such an exec through qemu (see that file). It is built here, once per build folder.
find_program(MINT_QEMU_AARCH64 qemu-aarch64 REQUIRED)
get_property(mint_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(NOT mint_in_try_compile)
    set(mint_reexec_src "${CMAKE_CURRENT_LIST_DIR}/qemu_reexec.c")
    set(mint_reexec_lib "${CMAKE_BINARY_DIR}/qemu-reexec/libqemu_reexec.so")
    if(NOT EXISTS "${mint_reexec_lib}" OR "${mint_reexec_src}" IS_NEWER_THAN "${mint_reexec_lib}")
        file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/qemu-reexec")
        set(mint_reexec_sysroot)
        if(MINT_AARCH64_SYSROOT)
            set(mint_reexec_sysroot "--sysroot=${MINT_AARCH64_SYSROOT}")
        endif()
        execute_process(
            COMMAND ${CMAKE_C_COMPILER} ${mint_reexec_sysroot} -shared -fPIC -O2 -D_GNU_SOURCE
                    -o "${mint_reexec_lib}" "${mint_reexec_src}"
            RESULT_VARIABLE mint_reexec_rc)
        if(NOT mint_reexec_rc EQUAL 0)
            message(FATAL_ERROR "could not build ${mint_reexec_lib} (exit ${mint_reexec_rc})")
        endif()
    endif()
    set(CMAKE_CROSSCOMPILING_EMULATOR
        env "QEMU_LD_PREFIX=${MINT_QEMU_PREFIX}" "QEMU_SET_ENV=LD_PRELOAD=${mint_reexec_lib}"
        "MINT_QEMU=${MINT_QEMU_AARCH64}" "${MINT_QEMU_AARCH64}")
endif()
