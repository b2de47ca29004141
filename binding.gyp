{
  "targets": [
    {
      "target_name": "pinclaw",
      "sources": [
        "native/addon.cc",
        "native/info.cc",
        "native/memory.cc",
        "native/notify.cc",
        "native/ranking.cc",
        "native/ranking_codec.cc",
        "native/ranking_hnsw.cc",
        "native/ranking_index.cc",
        "native/ranking_persist.cc",
        "native/ranking_text.cc",
        "native/ranking_vectors.cc",
        "native/tokenizer.cc",
        "native/tokenizer_bpe.cc",
        "native/tokenizer_parallel.cc",
        "native/tokenizer_ranks.cc",
        "native/tokenizer_split.cc",
        "native/tokenizer_utf8.cc",
        "native/sandbox.cc",
        "native/sandbox_landlock.cc",
        "native/sandbox_seccomp.cc",
        "native/sandbox_spawn.cc",
        "native/i2c.cc",
        "native/i2c_dev.cc",
        "native/i2c_error.cc",
        "native/gpio.cc",
        "native/gpio_dev.cc",
        "native/embed.cc",
        "native/embed_model.cc",
        "native/beneath.cc",
        "native/hmac.cc",
        "native/js_error.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "<(SHARED_INTERMEDIATE_DIR)", "<!(node -p \"require('path').resolve(require.resolve('usearch'), '../../../../include')\")"],
      "actions": [
        {
          "action_name": "tokenizer_unicode_classes",
          "inputs": ["native/gen/unicode-classes.mjs"],
          "outputs": ["<(SHARED_INTERMEDIATE_DIR)/pinclaw_unicode_classes.h"],
          "action": ["node", "native/gen/unicode-classes.mjs", "<@(_outputs)"]
        }
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-std=c++17", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra", "-ffp-contract=off"],
      "cflags_cc!": ["-fno-exceptions"]
    }
  ]
}
