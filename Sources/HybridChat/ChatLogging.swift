import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Where the library's log goes in this command.
enum ChatLogging {
  /// A handler that records every fallback for the answer's report and prints
  /// it as one stderr line, except with `--json`, where the fallback belongs
  /// in the JSON object and stderr stays for errors. Other warnings (cloud
  /// retries) get a line too; llama.cpp's own log never reaches this handler
  /// (it is routed separately and kept silent).
  static func handler(recorder: FallbackRecorder, terminal: Terminal, json: Bool) -> LogHandler {
    LogHandler { record in
      if let fallback = record.fallback {
        recorder.record(fallback)
        if !json { terminal.errorLine("hybrid-chat: \(fallback)") }
      } else if record.level >= .warning, record.category != .llama {
        terminal.errorLine("hybrid-chat: \(record.message)")
      }
    }
  }
}
