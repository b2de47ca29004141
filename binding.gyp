{
  "targets": [
    {
      "target_name": "pinclaw",
      "sources": [
        "native/addon.cc",
        "native/info.cc",
        "native/memory.cc",
        "native/notify.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-std=c++17", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra"],
      "cflags_cc!": ["-fno-exceptions"]
    }
  ]
}
