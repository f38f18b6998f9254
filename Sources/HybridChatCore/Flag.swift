/// `hybrid-chat`'s flags: the one table both the parser (`ArgumentParser`)
/// and `--help` (`HelpText.usage`) read, so a flag cannot be parsed without
/// being listed or listed without being parsed.
///
/// The cases are in the order the help lists them.
enum Flag: CaseIterable {
  case mode, model, projector, gpu, cloudModel, vertexProject, vertexLocation, server, serverModel, system, image, tool
  case temperature, topP, topK, seed, maxTokens, reasoning, thinking, hideThoughts
  case fallbackOn, hedgeAfter, continueInterrupted
  case noStream, json, devices, help, version

  /// The flag as written, `--name`.
  var spelling: String {
    switch self {
    case .help: "--help"
    case .version: "--version"
    case .mode: "--mode"
    case .model: "--model"
    case .gpu: "--gpu"
    case .projector: "--projector"
    case .devices: "--devices"
    case .cloudModel: "--cloud-model"
    case .server: "--server"
    case .serverModel: "--server-model"
    case .system: "--system"
    case .tool: "--tool"
    case .temperature: "--temperature"
    case .topP: "--top-p"
    case .topK: "--top-k"
    case .seed: "--seed"
    case .maxTokens: "--max-tokens"
    case .reasoning: "--reasoning"
    case .thinking: "--thinking"
    case .hideThoughts: "--hide-thoughts"
    case .noStream: "--no-stream"
    case .json: "--json"
    case .image: "--image"
    case .vertexProject: "--vertex-project"
    case .vertexLocation: "--vertex-location"
    case .fallbackOn: "--fallback-on"
    case .hedgeAfter: "--hedge-after"
    case .continueInterrupted: "--continue-interrupted"
    }
  }

  /// Other spellings that mean the same flag.
  var aliases: [String] {
    self == .help ? ["-h"] : []
  }

  /// The name of the flag's value in the help (`--mode MODE`); nil for a
  /// flag that takes none.
  var valueName: String? {
    switch self {
    case .help, .version, .devices, .noStream, .json, .continueInterrupted, .hideThoughts: nil
    case .gpu: "G"
    case .mode: "MODE"
    case .model: "MODEL"
    case .cloudModel, .serverModel, .tool: "NAME"
    case .server: "URL"
    case .system: "TEXT"
    case .temperature: "T"
    case .topP: "P"
    case .topK: "K"
    case .seed, .maxTokens: "N"
    case .reasoning: "R"
    case .thinking: "LEVEL"
    case .image, .projector: "PATH"
    case .vertexProject: "P"
    case .vertexLocation: "L"
    case .fallbackOn: "LIST"
    case .hedgeAfter: "MS"
    }
  }

  /// Whether the flag takes a value.
  var takesValue: Bool { valueName != nil }

  /// What the help says about the flag, one entry per line.
  var summary: [String] {
    switch self {
    case .mode:
      [
        "prefer-on-device | prefer-cloud | only-on-device | only-cloud",
        "(default: prefer-on-device with GEMINI_API_KEY or",
        "GOOGLE_API_KEY set, otherwise only-on-device)",
      ]
    case .model:
      [
        "the on-device GGUF model: a path; hf:ORG/REPO/FILE[@REVISION]",
        "(a Hugging Face file); or https://HOST/FILE#sha256=HEX (a file",
        "pinned by its SHA-256). Either of the last two is downloaded",
        "once, before the answer; Ctrl-C stops it and the next run",
        "resumes. Default: HYBRID_LOCAL_MODEL, else SmolLM2-135M-Instruct",
        "from `make setup`",
      ]
    case .projector:
      [
        "the on-device model's multimodal projector (an mmproj GGUF",
        "made for it): the device then reads --image itself. With",
        "--model PATH or the default model",
      ]
    case .gpu:
      [
        "the on-device model's layers on a GPU, where the linked",
        "llama.cpp has one: auto (every layer that fits its free",
        "memory; the default) | none | N (N layers)",
      ]
    case .devices: ["list the devices llama.cpp can compute on, and exit"]
    case .cloudModel: ["the Gemini model (default: \(ChatOptions.defaultCloudModel))"]
    case .server:
      [
        "an OpenAI-compatible server (llama-server, vLLM, Ollama)",
        "in place of Gemini, e.g. http://127.0.0.1:8080/v1",
      ]
    case .serverModel: ["the model name sent to it (default: \(ChatOptions.defaultServerModel))"]
    case .vertexProject:
      [
        "Gemini on Vertex AI in Google Cloud project P (default:",
        "GOOGLE_CLOUD_PROJECT when --vertex-location is given), with",
        "the token in GOOGLE_OAUTH_ACCESS_TOKEN, else the metadata server's",
      ]
    case .vertexLocation:
      [
        "the Vertex AI region, or global (default: GOOGLE_CLOUD_LOCATION,",
        "else global)",
      ]
    case .image:
      [
        "an image sent with the first prompt (repeatable; .jpg,",
        ".jpeg, .png, .webp or .gif); the device reads JPEG, PNG",
        "and GIF when --projector is given, and otherwise",
        "prefer-on-device answers that prompt in the cloud",
      ]
    case .fallbackOn:
      [
        "in a hybrid mode, also fall back on these (comma-separated):",
        "rate-limit, server-error, timeout, connection-lost",
      ]
    case .hedgeAfter:
      [
        "in a hybrid mode, ask the other model too when the first",
        "has shown nothing within MS milliseconds (the first to",
        "answer wins, the other is cancelled)",
      ]
    case .continueInterrupted:
      [
        "in a hybrid mode, let the other model finish an answer",
        "whose stream broke off",
      ]
    case .system: ["system instructions"]
    case .tool:
      [
        "a built-in tool the model may call (repeatable):",
        "time (the current date and time)",
      ]
    case .temperature: ["sampling temperature, >= 0 (0: greedy on device)"]
    case .topP: ["nucleus sampling threshold, in (0, 1]"]
    case .topK: ["sample among the K most likely tokens, > 0"]
    case .seed: ["random seed, 0...2147483647"]
    case .maxTokens: ["the longest answer, in tokens (thoughts included)"]
    case .reasoning:
      [
        "on-device thinking, for a model that thinks (Qwen3,",
        "DeepSeek-R1 distills, gpt-oss): off | light | moderate |",
        "deep | N (at most N thought tokens)",
      ]
    case .thinking: ["cloud (Gemini) thinking: minimal | low | medium | high"]
    case .hideThoughts:
      [
        "do not show the model's thoughts, which are otherwise",
        "shown before the answer: dimmed on a terminal, else on",
        "stderr; with --json, in the thoughts field only",
      ]
    case .noStream: ["print the answer when it is complete"]
    case .json:
      [
        "print one JSON object per answer (content, modelVersion,",
        "usage, finishReason, fallback, mode, timing, and",
        "thoughts when the model thought)",
      ]
    case .help: ["show this help"]
    case .version: ["show the version"]
    }
  }

  /// The flag named `spelling`, if any.
  init?(spelling: String) {
    guard let flag = Flag.allCases.first(where: { $0.spelling == spelling || $0.aliases.contains(spelling) }) else {
      return nil
    }
    self = flag
  }

  /// The help's option lines: each flag with its value, then its summary
  /// in a column.
  static var helpLines: [String] {
    let column = 21
    return allCases.flatMap { flag -> [String] in
      let name = (flag.aliases + [flag.spelling]).joined(separator: ", ") + (flag.valueName.map { " " + $0 } ?? "")
      let rest = String(repeating: " ", count: 2 + column)
      // A name too long for its column stands on a line of its own.
      guard name.count <= column - 2 else { return ["  " + name] + flag.summary.map { rest + $0 } }
      let first = "  " + name + String(repeating: " ", count: column - name.count)
      return flag.summary.enumerated().map { index, line in (index == 0 ? first : rest) + line }
    }
  }
}
