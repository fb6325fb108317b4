import DNSWire
import NIOCore

/// Answers from the cache, joins in-flight questions, and stores what the forwarder brings back.
public struct CacheLink: ResolverLink {
    public let cache: AnswerCache
    public let policies: PolicyStore
    /// Mode and TTL of the blocked answer (a CNAME chain through a blocked name), swappable by a reload.
    /// Such an answer counts as blocked in the metrics (`QueryRoute.blocked`), not as cached.
    public let blocking: BlockingSettingsStore

    public init(cache: AnswerCache, policies: PolicyStore, blocking: BlockingSettingsStore) {
        self.cache = cache
        self.policies = policies
        self.blocking = blocking
    }


    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        let now = NIODeadline.now().uptimeNanoseconds
        switch cache.lookup(CacheKey(context), now: now, on: context.eventLoop, into: &context.cached) {
        case .hit:
            context.route = .cached
            if context.cached.isStale { cache.noteStaleAnswer() }
            let limit = context.replyLimit
            let output = context.facts.renderCached(
                limit: limit, decision: context.decision, client: context.client, blocking: blocking.current, now: now,
                scratch: &context.scratch, builder: &context.builder)
            switch output {
            case .scratch: return .scratchReply
            case .builder: return .builtReply
            case .blocked:
                context.route = .blocked
                return .builtReply
            }
        case .wait(let future):
            context.route = .cached
            return .later(renderLater(future.hop(to: context.eventLoop), context))
        case .miss(let promise):
            let result = next(context)
            switch result {
            case .upstream(let future):
                // RFC 8767: when every upstream failed, the expired answer this question replaces.
                let key = CacheKey(context).owned
                let cache = cache
                future.map { answer in
                    cache.staleAnswer(for: key, replacing: answer, now: NIODeadline.now().uptimeNanoseconds) ?? answer
                }.cascade(to: promise)
                return .later(renderLater(promise.futureResult, context))
            default:
                // A link below answered by itself: nothing to cache, and nobody may wait forever.
                promise.fail(CacheBypassed())
                return result
            }
        }
    }

    private func renderLater(_ future: EventLoopFuture<CachedAnswer>, _ context: QueryContext) -> EventLoopFuture<LaterReply> {
        let pending = context.pending
        let client = context.client
        let policies = policies
        let blocking = blocking
        let cache = cache
        return future.map { answer in
            if answer.isStale { cache.noteStaleAnswer() }
            // The policy is read again now: a rule may have changed while the upstream answered.
            return AnswerRenderer.renderDetached(answer, for: pending, client: client, policy: policies.policy, blocking: blocking.current)
        }
    }
}

/// The link after the cache answered without the network; waiters on the question ask again.
struct CacheBypassed: Error {}
