/// The text of `hybrid-chat --help` and `--version`.
public enum HelpText {
  /// The command's version.
  public static let version = "0.1.0"

  /// What `--version` prints.
  public static var versionLine: String { "hybrid-chat \(version) (HybridInference)" }

  /// What `--help` prints.
  public static let usage = """
    Usage: hybrid-chat [options] [prompt ...]

    Answers a prompt on this machine (llama.cpp) or with Gemini, routed by --mode.
    The prompt is the words after the options, or stdin when it is piped. With
    neither, and stdin a terminal, it starts a chat (/reset, /mode <mode>, /quit).

    Options:
      --mode MODE          prefer-on-device | prefer-cloud | only-on-device | only-cloud
                           (default: prefer-on-device with GEMINI_API_KEY or
                           GOOGLE_API_KEY set, otherwise only-on-device)
      --model PATH         the on-device GGUF model (default: HYBRID_LOCAL_MODEL, else
                           SmolLM2-135M-Instruct from `make setup`)
      --cloud-model NAME   the Gemini model (default: \(ChatOptions.defaultCloudModel))
      --vertex-project P   Gemini on Vertex AI in Google Cloud project P (default:
                           GOOGLE_CLOUD_PROJECT when --vertex-location is given), with
                           the token in GOOGLE_OAUTH_ACCESS_TOKEN, else the metadata server's
      --vertex-location L  the Vertex AI region, or global (default: GOOGLE_CLOUD_LOCATION,
                           else global)
      --server URL         an OpenAI-compatible server (llama-server, vLLM, Ollama)
                           in place of Gemini, e.g. http://127.0.0.1:8080/v1
      --server-model NAME  the model name sent to it (default: \(ChatOptions.defaultServerModel))
      --system TEXT        system instructions
      --image PATH         an image sent with the first prompt (repeatable; .jpg,
                           .jpeg, .png, .webp or .gif); the device reads no images,
                           so prefer-on-device answers that prompt in the cloud
      --tool NAME          a built-in tool the model may call (repeatable):
                           time (the current date and time)
      --temperature T      sampling temperature, >= 0 (0: greedy on device)
      --top-p P            nucleus sampling threshold, in (0, 1]
      --top-k K            sample among the K most likely tokens, > 0
      --seed N             random seed, 0...2147483647
      --max-tokens N       the longest answer, in tokens
      --thinking LEVEL     Gemini thinking: minimal | low | medium | high
      --fallback-on LIST   in a hybrid mode, also fall back on these (comma-separated):
                           rate-limit, server-error, timeout, connection-lost
      --hedge-after MS     in a hybrid mode, ask the other model too when the first
                           has shown nothing within MS milliseconds (the first to
                           answer wins, the other is cancelled)
      --continue-interrupted
                           in a hybrid mode, let the other model finish an answer
                           whose stream broke off
      --no-stream          print the answer when it is complete
      --json               print one JSON object per answer (content, modelVersion,
                           usage, finishReason, fallback, mode, timing)
      -h, --help           show this help
      --version            show the version

    After the answer, stderr gets one line: the model that answered, its tokens,
    the time to the first token and the speed. Exit status: 0 on success, 1 when
    no answer could be produced, 2 for a usage error.

    Environment: GEMINI_API_KEY / GOOGLE_API_KEY (the cloud key), OPENAI_API_KEY
    (the --server key, if it needs one),
    HYBRID_LOCAL_MODEL (the default GGUF file), HYBRID_INFERENCE_DISABLE_LOCAL=1.
    """
}
