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
    \(Flag.helpLines.joined(separator: "\n"))

    After the answer, stderr gets one line: the model that answered, its tokens,
    the time to the first token and the speed. Exit status: 0 on success, 1 when
    no answer could be produced, 2 for a usage error, 130 when Ctrl-C stopped a
    download or a one-shot answer, or left a chat.

    Environment: GEMINI_API_KEY / GOOGLE_API_KEY (the cloud key), OPENAI_API_KEY
    (the --server key, if it needs one),
    HYBRID_LOCAL_MODEL (the default GGUF file), HYBRID_INFERENCE_DISABLE_LOCAL=1,
    HF_ENDPOINT / HF_HUB_CACHE / HF_TOKEN (the hub, its cache and its token for
    hf: models), HYBRID_INFERENCE_MODELS (where https: models go).
    """
}
