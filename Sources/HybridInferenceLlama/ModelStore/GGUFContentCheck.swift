import HybridInferenceCore
import HybridInferenceJinja

/// Why a structurally sound GGUF file is still refused.
struct GGUFProblem: Error, Equatable {
  var reason: String
}

/// Checks what a GGUF file says against what llama.cpp assumes of it.
///
/// `GGUFParser` proves the file is well formed; this proves its contents are
/// ones the pinned llama.cpp (scripts/common.sh) loads without reaching a `GGML_ASSERT`.
/// Each check mirrors an assert, an abort or an unchecked read found on the load
/// path (`llama_model_load_from_file` and the first `llama_init_from_model`,
/// whose graph reserve runs the architecture's graph builder). llama.cpp turns
/// C++ exceptions into a NULL model, but an assert ends the host process, and
/// no Swift error handling can catch that. Reads only what the header holds:
/// the check runs on every `availability` after a file changes.
enum GGUFContentCheck {
  static func validate(_ file: GGUFFile) throws(GGUFProblem) {
    // llama.cpp would open the other parts by name, files no check has read.
    if let parts = file.metadata["split.count"]?.integer, parts > 1 {
      throw GGUFProblem(
        reason: "the file is part of a model split in \(parts) files, which are loaded unchecked: "
          + "merge them into one (llama-gguf-split --merge)")
    }
    let architecture = try checkedArchitecture(of: file)
    let hyperparameters = GGUFHyperparameters(file: file, architecture: architecture)
    let vocabularySize = try GGUFVocabularyCheck.validate(file)
    try GGUFHyperparameterCheck.validate(hyperparameters)
    if GGUFAttentionCheck.architectures.contains(architecture) {
      try GGUFAttentionCheck.validate(hyperparameters, vocabularySize: vocabularySize)
    }
  }

  /// The architecture, when llama.cpp knows it and can run it as a language model.
  private static func checkedArchitecture(of file: GGUFFile) throws(GGUFProblem) -> String {
    guard let architecture = file.architecture, !architecture.isEmpty else {
      throw GGUFProblem(reason: "general.architecture is missing: not a model llama.cpp can load")
    }
    if architecture == "clip" {
      throw GGUFProblem(reason: "architecture 'clip' is a vision projector (mmproj), not a language model")
    }
    guard knownArchitectures.contains(architecture) else {
      throw GGUFProblem(
        reason: "unknown architecture '\(architecture)': llama.cpp \(LlamaBuildInfo.linkedVersion) cannot run it")
    }
    return architecture
  }

  /// `LLM_ARCH_NAMES` of the pinned llama.cpp (src/llama-arch.cpp), less `clip`.
  /// A llama.cpp that knows none of these would throw, not abort; the list is
  /// here so that the reason names the file's architecture rather than
  /// "llama.cpp could not load it". Update it with the pin.
  static let knownArchitectures: Set<String> = [
    "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan", "starcoder",
    "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2", "jina-bert-v3",
    "eurobert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3next",
    "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen4exp", "phi2", "phi3", "phimoe", "plamo", "plamo2",
    "plamo3", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", "gemma3n",
    "gemma4", "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba", "mamba2", "maple", "jamba",
    "falcon-h1", "xverse", "command-r", "cohere2", "cohere2moe", "dbrx", "olmo", "olmo2", "olmoe",
    "muse-glimmer", "openelm", "arctic", "deepseek", "deepseek2", "deepseek2-ocr", "deepseek32", "deepseek4",
    "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5", "t5encoder", "jais", "jais2", "nemotron",
    "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "exaone-moe", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7",
    "granite", "granitemoe", "granitehybrid", "graniteswitch", "granite_swa", "chameleon", "wavtokenizer-dec",
    "plm", "bailingmoe", "bailingmoe2", "bailingmoe3", "dots1", "dots3note", "arcee", "afmoe", "laguna",
    "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "hunyuan_vl", "hy_v3", "hy_v4", "smollm3",
    "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada", "llada-moe", "seed_oss", "grovemoe",
    "apertus", "minimax-01", "hrm_text", "minimax-m2", "minimax-m3", "cogvlm", "rnd1", "pangu-embedded",
    "mistral3", "eagle3", "dflash", "mistral4", "paddleocr", "mimo2", "step35", "spark2_5", "llama-embed",
    "maincoder", "kimi-linear", "kimi-k3", "glm5-next", "talkie", "mellum", "nanbeige", "qwen3tts", "pockettts",
  ]
}
