// The product an app imports: every part of the library behind one module name.
//
// `import HybridInference` gives the session, the hybrid model, both remote
// backends, the on-device model and its downloads. Each re-exported module is a target of
// its own (see Package.swift): the walls between them are kept by the
// compiler, and an app that wants no llama.cpp imports `HybridInferenceCloud`.

@_exported import HybridInferenceCore
@_exported import HybridInferenceDownload
@_exported import HybridInferenceGemini
@_exported import HybridInferenceLlama
@_exported import HybridInferenceOpenAI
@_exported import HybridInferenceRemote
