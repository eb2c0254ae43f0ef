# Installation layout and the Debian package (CPack DEB). Build the package with
# scripts/build-deb.sh, from the same build tree as everything else: the installed executable is
# build/installed/vigil, whose default model directory is VIGIL_INSTALLED_MODEL_DIR
# (/var/lib/vigil/models/yolox-nano; the weights are fetched there after installation).
include(GNUInstallDirs)

install(TARGETS vigil_installed RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# ONNX Runtime from the distribution (Debian 13+) is a package dependency found by
# dpkg-shlibdeps. The one fetched on Debian 12 (scripts/fetch-onnxruntime.sh) is not packaged
# there, so the package carries it privately in /usr/lib/vigil, where vigil's RUNPATH looks.
if(VIGIL_ORT_BUNDLED)
  # The package's prefix is /usr (CPACK_PACKAGING_INSTALL_PREFIX below).
  install(FILES ${VIGIL_ORT_LIBRARY_FILE} DESTINATION lib/vigil)
  install(FILES ${VIGIL_ORT_ROOT}/VERSION DESTINATION ${CMAKE_INSTALL_DOCDIR}
          RENAME onnxruntime-version.txt)
  set_target_properties(vigil_installed PROPERTIES INSTALL_RPATH /usr/lib/vigil)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/lintian-overrides
          DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME vigil)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${VIGIL_ORT_ROOT}/lib)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/config/cameras.yaml DESTINATION /etc/vigil)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/vigil.service DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/models/yolox-nano/model.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil/models/yolox-nano)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/fetch-model.sh DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil)
# The NPU bundles name ../yolox-nano as their CPU twin (model.yaml cpu_twin): beside them here, its
# weights are where fetch-model.sh puts them. A link, checked through by the twin's sha256 at load
# (a missing or other file is refused and the bundle's own stages answer).
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/cpu-twin)
file(CREATE_LINK ${VIGIL_INSTALLED_MODEL_DIR}/yolox_nano.onnx
     ${PROJECT_BINARY_DIR}/cpu-twin/yolox_nano.onnx SYMBOLIC)
install(FILES ${PROJECT_BINARY_DIR}/cpu-twin/yolox_nano.onnx
        DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil/models/yolox-nano)
# The NPU-ready models (complete: their weights are in git) and the quantizer that makes them
# from the user's own camera frames (calibration_samples), with its private modules.
foreach(npu_model float xint8 a8w8 a16w8)
  install(FILES ${PROJECT_SOURCE_DIR}/models/yolox-nano-npu-${npu_model}/model.yaml
                ${PROJECT_SOURCE_DIR}/models/yolox-nano-npu-${npu_model}/npu.onnx
                ${PROJECT_SOURCE_DIR}/models/yolox-nano-npu-${npu_model}/head.onnx
                ${PROJECT_SOURCE_DIR}/models/yolox-nano-npu-${npu_model}/canary.jpg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil/models/yolox-nano-npu-${npu_model})
endforeach()
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/quantize-model.py DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/quantize DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil
        FILES_MATCHING PATTERN "*.py")
# Alerting rules for a fleet, and a scrape configuration to start from.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/prometheus/vigil-rules.yml
              ${PROJECT_SOURCE_DIR}/packaging/prometheus/prometheus-vigil.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil/prometheus)
# A Home Assistant blueprint: a phone notification with the event's picture (README: Alerts on
# your phone).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/homeassistant/vigil_person_alert.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/vigil/homeassistant)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# TLS and logins for the HTTP endpoint: an example to copy to /etc/vigil (not active as shipped).
install(FILES ${PROJECT_SOURCE_DIR}/config/web-config.yml DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
        RENAME README.systemd.md)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Debian wants the changelog compressed with gzip -9n.
# A native package (no Debian revision in the version): changelog.gz.
set(changelog_gz ${PROJECT_BINARY_DIR}/changelog.gz)
add_custom_command(OUTPUT ${changelog_gz}
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/debian/changelog > ${changelog_gz}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
add_custom_target(vigil_changelog ALL DEPENDS ${changelog_gz})
install(FILES ${changelog_gz} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The manual page (written by hand from `vigil --help`), compressed the same way.
set(manpage_gz ${PROJECT_BINARY_DIR}/vigil.1.gz)
add_custom_command(OUTPUT ${manpage_gz}
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/vigil.1 > ${manpage_gz}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/vigil.1)
add_custom_target(vigil_manpage ALL DEPENDS ${manpage_gz})
install(FILES ${manpage_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vigil)
set(CPACK_PACKAGE_VENDOR "The Vigil developers")
set(CPACK_PACKAGE_CONTACT "Vigil developers <vigil@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "always-on person detection for cameras, on an NPU or the CPU")
set(CPACK_PACKAGE_DESCRIPTION "Vigil grabs frames from V4L2 cameras and RTSP, HTTP
or file sources, runs a YOLOX person detector (on an AMD Ryzen AI NPU where
present, else the CPU), and publishes presence events over MQTT with Home
Assistant discovery and metrics for Prometheus.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # vigil_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dependencies computed by dpkg-shlibdeps, not guessed
# adduser: the maintainer scripts; procps: /bin/kill, the unit's ExecReload (found missing by
# scripts/test-vm-journey.sh on a minimal Debian, where `systemctl reload vigil` failed).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, procps")
# python3 and its modules: /usr/share/vigil/quantize-model.py only; the daemon needs none.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "mosquitto-clients")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "python3, python3-onnx, python3-numpy, python3-opencv, python3-yaml")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_STRIP_FILES ON)
include(CPack)
