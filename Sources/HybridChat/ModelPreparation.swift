import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Loads the on-device model before the first prompt, with a progress bar on
/// a terminal, so the load does not count as the answer's time to first token.
enum ModelPreparation {
  static func prepare(_ catalog: ModelCatalog, for mode: InferenceMode, terminal: Terminal)
    async throws(CommandError)
  {
    switch mode {
    case .onlyOnDevice:
      do {
        try await load(catalog.local, terminal: terminal)
      } catch {
        throw ErrorReport.commandError(for: error)
      }
    case .preferOnDevice:
      // Not fatal: the hybrid answers from the cloud and logs why.
      if catalog.local.isAvailable { try? await load(catalog.local, terminal: terminal) }
    case .preferCloud, .onlyCloud:
      // The cloud answers; the device loads only if a fallback needs it.
      break
    }
  }

  private static func load(_ local: LocalSystemModel, terminal: Terminal) async throws {
    guard terminal.stderrIsTerminal else {
      try await local.prepare()
      return
    }
    let name = local.modelPath.split(separator: "/").last.map(String.init) ?? local.modelPath
    let display = ProgressDisplay(label: "Loading \(name)", terminal: terminal)
    defer { display.finish() }
    try await local.prepare { display.update($0) }
  }
}
