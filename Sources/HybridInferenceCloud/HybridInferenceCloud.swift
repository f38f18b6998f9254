// The cloud-only product: the session, the hybrid model and both remote
// backends, without llama.cpp.
//
// An app that routes between Gemini and OpenAI-compatible servers (a fleet
// of llama-server, vLLM, a gateway) imports this module and builds on a
// machine where pkg-config finds no llama.cpp: nothing here depends on
// CLlama.

@_exported import HybridInferenceCore
@_exported import HybridInferenceGemini
@_exported import HybridInferenceOpenAI
@_exported import HybridInferenceRemote
