package dev.kpipe.quotas;

/**
 * A set of {@link MuteReason}s packed in an {@code int}, so that computing a connection's reasons
 * allocates nothing. Pure functions; thread-safe.
 */
public final class MuteReasons {
    /** The empty set: the connection may be unmuted. */
    public static final int NONE = 0;

    private MuteReasons() {}

    /**
     * @param reasons a set
     * @param reason a reason
     * @return the set with the reason added
     */
    public static int with(int reasons, MuteReason reason) {
        return reasons | reason.bit();
    }

    /**
     * @param reasons a set
     * @param reason a reason
     * @param present whether to add it
     * @return the set with the reason added if {@code present}
     */
    public static int withIf(int reasons, MuteReason reason, boolean present) {
        return present ? reasons | reason.bit() : reasons;
    }

    /**
     * @param reasons a set
     * @param reason a reason
     * @return true if the set holds the reason
     */
    public static boolean has(int reasons, MuteReason reason) {
        return (reasons & reason.bit()) != 0;
    }

    /**
     * @param reasons a set
     * @return e.g. {@code [AWAITING_DISPATCH, THROTTLED]}
     */
    public static String toString(int reasons) {
        StringBuilder sb = new StringBuilder("[");
        for (MuteReason r : MuteReason.values()) {
            if (has(reasons, r)) {
                if (sb.length() > 1) {
                    sb.append(", ");
                }
                sb.append(r);
            }
        }
        return sb.append(']').toString();
    }
}
