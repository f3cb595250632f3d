# viewer/npm_ci.cmake — installs the viewer's npm packages (three, esbuild, playwright-core,
# pinned by package-lock.json) into viewer/node_modules, unless the installed set already
# matches the lock file; touches STAMP when it installed (or STAMP is missing), so that what
# depends on the packages is rebuilt. No browser is downloaded: playwright-core has no install
# script (the only one in the lock file is esbuild's, which checks its own binary), and
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD is set anyway; the browser test drives /usr/bin/chromium.
# Run at every build (viewer/CMakeLists.txt):
#   cmake -DNPM=/usr/bin/npm -DVIEWER_DIR=.../viewer -DSTAMP=.../npm-ci.stamp -P npm_ci.cmake
set(lock "${VIEWER_DIR}/package-lock.json")
set(installed_lock "${VIEWER_DIR}/node_modules/.diffphys-package-lock.json")
set(up_to_date FALSE)
if(EXISTS "${installed_lock}")
  file(READ "${lock}" wanted)
  file(READ "${installed_lock}" have)
  if(wanted STREQUAL have AND EXISTS "${VIEWER_DIR}/node_modules/three/package.json"
     AND EXISTS "${VIEWER_DIR}/node_modules/esbuild/package.json"
     AND EXISTS "${VIEWER_DIR}/node_modules/playwright-core/package.json")
    set(up_to_date TRUE)
  endif()
endif()
if(NOT up_to_date)
  message(STATUS "viewer: npm ci in ${VIEWER_DIR} (three.js, esbuild, playwright-core from the npm registry)")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
            "${NPM}" ci --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY "${VIEWER_DIR}"
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR
      "viewer: 'npm ci' failed in ${VIEWER_DIR} (exit ${result}). The web viewer bundles "
      "three.js from the npm registry at build time: the registry must be reachable once "
      "(or the packages in npm's cache); see docs/viewer.md.")
  endif()
  file(COPY_FILE "${lock}" "${installed_lock}")
  file(TOUCH "${STAMP}")
elseif(NOT EXISTS "${STAMP}")
  file(TOUCH "${STAMP}")
endif()
