// swift-tools-version:6.2
// 6.2: `SendableMetatype` (GenerationSchema(deriving:)) is a Swift 6.2 name.
import PackageDescription

// The library's public modules, for this package's own executables and tests. They
// import these rather than the umbrella `HybridInference`: a client of a module that
// only re-exports (`@_exported import`) is not rebuilt when a re-exported module
// changes (seen with Swift 6.3: stale objects, undefined symbols at link time).
let libraryModules: [Target.Dependency] = [
  "HybridInferenceCore", "HybridInferenceRemote", "HybridInferenceGemini",
  "HybridInferenceOpenAI", "HybridInferenceDownload", "HybridInferenceLlama",
]

let package = Package(
  name: "HybridInference",
  products: [
    // Everything: the session, the hybrid model, both remote backends and llama.cpp.
    .library(name: "HybridInference", targets: ["HybridInference"]),
    // The same without llama.cpp: builds where pkg-config finds no llama.pc.
    .library(name: "HybridInferenceCloud", targets: ["HybridInferenceCloud"]),
    .executable(name: "hybrid-chat", targets: ["hybrid-chat"]),
  ],
  targets: [
    // The walls (the Architecture article, "Modules and walls"). Each target
    // reaches another only through what it exports: `public` for apps,
    // `package` where a wall must be crossed.

    // The OS's C headers the Swift modules of the C library leave out (epoll,
    // pthread_setname_np, dladdr), a thread start with one signature on
    // glibc, musl and Darwin, and OpenSSL's SHA-256 looked up by name where
    // the process has libcrypto (never linked). Any target may use it: it is
    // not a wall (its Linux-only part is behind __linux__, so it builds
    // everywhere).
    .target(
      name: "CHybridOS",
      path: "Sources/CHybridOS",
      // dladdr: in libc from glibc 2.34, in libdl before.
      linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
    ),
    // The language-model protocol, requests and responses, sessions, the hybrid
    // model, transcript, options, errors, schemas and the tool loop.
    .target(name: "HybridInferenceCore", dependencies: ["CHybridOS"], path: "Sources/HybridInferenceCore"),
    // What any remote backend shares: the transports (URLSession and the
    // library's HTTP/1.1 client), SSE, the retry loop, reachability memory,
    // origin and redirect policy.
    .target(
      name: "HybridInferenceRemote",
      dependencies: ["CHybridOS", "HybridInferenceCore"],
      path: "Sources/HybridInferenceRemote"
    ),
    // The Gemini REST API (`CloudGeminiModel`) and its wire types.
    .target(
      name: "HybridInferenceGemini",
      dependencies: ["HybridInferenceCore", "HybridInferenceRemote"],
      path: "Sources/HybridInferenceGemini"
    ),
    // Any OpenAI-compatible server (`OpenAICompatibleModel`).
    .target(
      name: "HybridInferenceOpenAI",
      dependencies: ["HybridInferenceCore", "HybridInferenceRemote"],
      path: "Sources/HybridInferenceOpenAI"
    ),
    // Model files fetched by the library itself (`ModelSource`, `ModelStore`,
    // `DownloadProgress`): the hub cache layout, resumable verified downloads
    // over the shared transport.
    .target(
      name: "HybridInferenceDownload",
      dependencies: ["CHybridOS", "HybridInferenceCore", "HybridInferenceRemote"],
      path: "Sources/HybridInferenceDownload"
    ),
    // The Jinja engine that runs chat templates: a value in, text out.
    .target(name: "HybridInferenceJinja", path: "Sources/HybridInferenceJinja"),
    // llama.cpp's C API, found through pkg-config (`llama.pc`): a distribution
    // package, Homebrew, or the prefix that `make setup` builds.
    .systemLibrary(
      name: "CLlama",
      path: "Sources/CLlama",
      pkgConfig: "llama",
      providers: [.apt(["libllama-dev"]), .brew(["llama.cpp"])]
    ),
    // llama.cpp's multimodal library, libmtmd, opened at run time (dlopen) and
    // never linked: a llama.cpp without it (a distribution's) still serves
    // text, and a projector reports why it cannot load. Its declarations of
    // libmtmd are checked against mtmd.h by scripts/check-mtmd-declarations.sh.
    .target(
      name: "CHybridMTMD",
      path: "Sources/CHybridMTMD",
      // dlopen, dlsym, dladdr: in libc from glibc 2.34, in libdl before.
      linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
    ),
    // `LocalSystemModel`: the runtime, sampler, GGUF checks and chat templates.
    .target(
      name: "HybridInferenceLlama",
      dependencies: [
        "CHybridOS", "HybridInferenceCore", "HybridInferenceDownload", "HybridInferenceJinja", "CLlama", "CHybridMTMD",
      ],
      path: "Sources/HybridInferenceLlama"
    ),
    // The products' umbrella modules: re-exports only.
    .target(
      name: "HybridInference",
      dependencies: [
        "HybridInferenceCore", "HybridInferenceRemote", "HybridInferenceGemini",
        "HybridInferenceOpenAI", "HybridInferenceDownload", "HybridInferenceLlama",
      ],
      path: "Sources/HybridInference"
    ),
    .target(
      name: "HybridInferenceCloud",
      dependencies: [
        "HybridInferenceCore", "HybridInferenceRemote", "HybridInferenceGemini",
        "HybridInferenceOpenAI",
      ],
      path: "Sources/HybridInferenceCloud"
    ),
    .executableTarget(
      name: "local-benchmark",
      dependencies: libraryModules + ["CLlama", "GeminiServerProcess", "OpenAIServers"],
      path: "Benchmarks/LocalBenchmark"
    ),
    .executableTarget(
      name: "cloud-benchmark",
      dependencies: libraryModules + ["GeminiServerProcess", "OpenAIServers"],
      path: "Benchmarks/CloudBenchmark"
    ),
    // The `hybrid-chat` demo: the executable holds the I/O (terminal, chat
    // loop); HybridChatCore holds what can be unit-tested without a process
    // (argument parsing, option mapping, output formatting).
    .target(
      name: "HybridChatCore",
      dependencies: libraryModules,
      path: "Sources/HybridChatCore"
    ),
    .executableTarget(
      name: "hybrid-chat",
      dependencies: libraryModules + ["HybridChatCore"],
      path: "Sources/HybridChat"
    ),
    .testTarget(
      name: "HybridChatTests",
      dependencies: libraryModules + ["HybridChatCore", "GeminiServerProcess", "TestPrerequisites"],
      path: "Tests/HybridChatTests"
    ),
    // Starts the loopback Gemini server (tests, the cloud benchmark) and the
    // loopback Hugging Face hub and CDN (the model download tests).
    .target(
      name: "GeminiServerProcess",
      path: "Tests/GeminiServerProcess"
    ),
    // Starts llama.cpp's llama-server for the OpenAI-compatible tests and benchmark.
    .target(
      name: "OpenAIServers",
      path: "Tests/OpenAIServers"
    ),
    // Fails a test whose prerequisite is missing under CI or `make test`, skips it elsewhere.
    .target(
      name: "TestPrerequisites",
      path: "Tests/TestPrerequisites"
    ),
    .testTarget(
      name: "HybridInferenceTests",
      dependencies: [
        "HybridInference", "HybridInferenceCore", "HybridInferenceRemote", "HybridInferenceGemini",
        "HybridInferenceOpenAI", "HybridInferenceJinja", "HybridInferenceDownload", "HybridInferenceLlama",
        "CHybridOS", "GeminiServerProcess", "OpenAIServers", "TestPrerequisites",
      ],
      path: "Tests/HybridInferenceTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)
