import Foundation
import HybridInferenceCore

/// Where an on-device model keeps the prompt state it computed, so that a
/// session whose prompt starts with a saved prefix (a conversation restored
/// in another process, the same long instructions) skips that prefill.
///
/// ```swift
/// let cache = PromptCache.directory(URL(fileURLWithPath: "/var/cache/app/kv"), maximumBytes: 2 << 30)
/// let local = LocalSystemModel(modelPath: "/models/smollm2.gguf", promptCache: cache)
/// ```
///
/// After each turn on device, the llama.cpp state of the turn's prompt is on
/// disk by the time `respond` returns (or its stream ends), and replaces the
/// state of the prefix it extends (saved with either attention setting, when
/// the context switches at a crossing), so a conversation keeps one file
/// whatever its length. A new turn whose sequence holds less of its prompt in memory
/// loads the longest saved prefix instead of decoding it;
/// `UsageMetadata.cachedContentTokenCount` counts the tokens that were not
/// decoded again. The shareable opening of a prompt (the instructions and
/// tool declarations, no message) is saved once on its own too.
///
/// What lands on disk: the prompt's tokens and their keys and values, so
/// anyone who can read the directory can read the conversations. Files are
/// mode 0600 in a directory made 0700; share a directory only between
/// processes that may see each other's conversations. A state holds only
/// what its own prompt holds, and is loaded only for a prompt that starts
/// with all of it. Files are keyed by the model file, the llama.cpp build
/// and the KV cache settings; each is checked (checksums, header, layout)
/// before llama.cpp reads it, and one that fails is logged and removed.
/// Processes sharing the directory take a lock on `.lock` in it; files are
/// written atomically (a temp file of a random name, created exclusively and
/// never through a link, renamed into place), read header first (a file
/// costs memory only as far as it checks), and the least recently used are
/// removed once the total passes `maximumBytes`.
public final class PromptCache: Sendable {
  /// The directory the states are kept in.
  public let directoryURL: URL
  /// The most bytes the files may take together; a state larger than this alone is not saved.
  public let maximumBytes: Int
  let store: PromptCacheDirectory

  private init(directoryURL: URL, maximumBytes: Int) {
    self.directoryURL = directoryURL
    self.maximumBytes = maximumBytes
    self.store = PromptCacheDirectory(path: directoryURL.path, maximumBytes: maximumBytes)
  }

  /// A cache in `url`, made (mode 0700) on the first save if missing, of at
  /// most `maximumBytes` (1 GiB by default: SmolLM2-135M's state is about
  /// 23 KB a token, 45 conversations of 1,000 tokens).
  public static func directory(_ url: URL, maximumBytes: Int = 1 << 30) -> PromptCache {
    PromptCache(directoryURL: url, maximumBytes: maximumBytes)
  }

  /// Bytes the cache's files take on disk now (0 when the directory does not exist).
  public var currentDiskUsage: Int { store.usage }

  /// Removes every state the cache saved, in every process sharing the
  /// directory (under its lock); the directory itself stays.
  public func removeAll() throws {
    try store.removeAll()
  }
}
