"""BLAST's statistics of gapped local alignment scores: bit scores and e-values as blastp (BLAST+
2.2.26 and later) reports them with `-comp_based_stats 0`.

A raw score S is worth (lambda S - ln K) / ln 2 bits (Karlin-Altschul). Its e-value is Spouge's
finite-size correction of Karlin-Altschul, which blastp uses in place of the older effective
lengths: for a query of m residues and a database sequence of n, an alignment scoring y is
expected to span l(y) = a y + b residues of each, with variance alpha y + beta and covariance
sigma y + tau; the pair's "area" is the expected number of places such an alignment fits,

    p(m) = (m - l) P(F) + sqrt(v) phi(F),  F = (m - l) / sqrt(v)      (the same for n)
    area = p(m) p(n) + c P(F_m) P(F_n),  c = max(2 sigma / lambda, sigma y + tau)
    E = area K exp(-lambda y) x (database residues / n)

with P and phi the normal distribution and density, and v, c floored as above. The parameters
(lambda, K, H, a, beta of the mean length; alpha_v and sigma of its variance and covariance) are
estimated per matrix and gap costs (Altschul, Bundschuh, Olsen and Hwa, Nucleic Acids Res.
29:351, 2001; Spouge's tables) and are those NCBI BLAST tabulates (blast_stat.c, NCBI C++
Toolkit); b, beta and tau follow from the ungapped row: 2 G (a_ungapped - a) and so on, with
G = gap open + gap extend. docs/benchmarks.md compares the results with blastp's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# matrix -> ((a, alpha_v) of ungapped alignment, [(gap open, gap extend, lambda, K, H, a, beta,
# C, alpha_v, sigma), ...]); BLAST's gap convention (a gap of L residues costs open + L * extend).
_TABLE = {
    "BLOSUM45": ((0.9113, 9.611060), [
        (13, 3, 0.207, 0.049, 0.14, 1.5, -22, 0.671128, 35.855900, 35.963900),
        (12, 3, 0.199, 0.039, 0.11, 1.8, -34, 0.691530, 45.693600, 45.851700),
        (11, 3, 0.190, 0.031, 0.095, 2.0, -38, 0.691181, 62.874100, 63.103700),
        (10, 3, 0.179, 0.023, 0.075, 2.4, -51, 0.710529, 88.286800, 88.639100),
        (16, 2, 0.210, 0.051, 0.14, 1.5, -24, 0.666680, 36.279800, 36.452400),
        (15, 2, 0.203, 0.041, 0.12, 1.7, -31, 0.673871, 44.825700, 45.060400),
        (14, 2, 0.195, 0.032, 0.10, 1.9, -36, 0.685753, 60.736200, 61.102300),
        (13, 2, 0.185, 0.024, 0.084, 2.2, -45, 0.698480, 85.148100, 85.689400),
        (12, 2, 0.171, 0.016, 0.061, 2.8, -65, 0.713429, 127.758000, 128.582000),
        (19, 1, 0.205, 0.040, 0.11, 1.9, -43, 0.672302, 53.071400, 53.828200),
        (18, 1, 0.198, 0.032, 0.10, 2.0, -43, 0.682580, 72.342400, 73.403900),
        (17, 1, 0.189, 0.024, 0.079, 2.4, -57, 0.695035, 103.055000, 104.721000),
        (16, 1, 0.176, 0.016, 0.063, 2.8, -67, 0.712966, 170.100000, 173.003000),
    ]),
    "BLOSUM50": ((0.6895, 5.388310), [
        (13, 3, 0.212, 0.063, 0.19, 1.1, -16, 0.639287, 18.113800, 18.202800),
        (12, 3, 0.206, 0.055, 0.17, 1.2, -18, 0.644715, 22.654600, 22.777700),
        (11, 3, 0.197, 0.042, 0.14, 1.4, -25, 0.656327, 29.861100, 30.045700),
        (10, 3, 0.186, 0.031, 0.11, 1.7, -34, 0.671150, 42.393800, 42.674000),
        (9, 3, 0.172, 0.022, 0.082, 2.1, -48, 0.694326, 66.069600, 66.516400),
        (16, 2, 0.215, 0.066, 0.20, 1.05, -15, 0.633899, 17.951800, 18.092100),
        (15, 2, 0.210, 0.058, 0.17, 1.2, -20, 0.641985, 21.940100, 22.141800),
        (14, 2, 0.202, 0.045, 0.14, 1.4, -27, 0.650682, 28.681200, 28.961900),
        (13, 2, 0.193, 0.035, 0.12, 1.6, -32, 0.660984, 42.059500, 42.471600),
        (12, 2, 0.181, 0.025, 0.095, 1.9, -41, 0.678090, 63.747600, 64.397300),
        (19, 1, 0.212, 0.057, 0.18, 1.2, -21, 0.635714, 26.311200, 26.923300),
        (18, 1, 0.207, 0.050, 0.15, 1.4, -28, 0.643523, 34.903700, 35.734800),
        (17, 1, 0.198, 0.037, 0.12, 1.6, -33, 0.654504, 48.895800, 50.148600),
        (16, 1, 0.186, 0.025, 0.10, 1.9, -42, 0.667750, 76.469100, 78.443000),
        (15, 1, 0.171, 0.015, 0.063, 2.7, -76, 0.694575, 140.053000, 144.160000),
    ]),
    "BLOSUM62": ((0.7916, 4.964660), [
        (11, 2, 0.297, 0.082, 0.27, 1.1, -10, 0.641766, 12.673800, 12.757600),
        (10, 2, 0.291, 0.075, 0.23, 1.3, -15, 0.649362, 16.474000, 16.602600),
        (9, 2, 0.279, 0.058, 0.19, 1.5, -19, 0.659245, 22.751900, 22.950000),
        (8, 2, 0.264, 0.045, 0.15, 1.8, -26, 0.672692, 35.483800, 35.821300),
        (7, 2, 0.239, 0.027, 0.10, 2.5, -46, 0.702056, 61.238300, 61.886000),
        (6, 2, 0.201, 0.012, 0.061, 3.3, -58, 0.740802, 140.417000, 141.882000),
        (13, 1, 0.292, 0.071, 0.23, 1.2, -11, 0.647715, 19.506300, 19.893100),
        (12, 1, 0.283, 0.059, 0.19, 1.5, -19, 0.656391, 27.856200, 28.469900),
        (11, 1, 0.267, 0.041, 0.14, 1.9, -30, 0.669720, 42.602800, 43.636200),
        (10, 1, 0.243, 0.024, 0.10, 2.5, -44, 0.693267, 83.178700, 85.065600),
        (9, 1, 0.206, 0.010, 0.052, 4.0, -87, 0.731887, 210.333000, 214.842000),
    ]),
    "BLOSUM80": ((0.5222, 1.918130), [
        (25, 2, 0.342, 0.17, 0.66, 0.52, -1.6, 0.563956, 1.731000, 1.731300),
        (13, 2, 0.336, 0.15, 0.57, 0.59, -3, 0.570979, 2.673470, 2.692300),
        (9, 2, 0.319, 0.11, 0.42, 0.76, -6, 0.587837, 5.576090, 5.667860),
        (8, 2, 0.308, 0.090, 0.35, 0.89, -9, 0.597556, 7.536950, 7.686230),
        (7, 2, 0.293, 0.070, 0.27, 1.1, -14, 0.615254, 11.586600, 11.840400),
        (6, 2, 0.268, 0.045, 0.19, 1.4, -19, 0.644054, 19.958100, 20.441200),
        (11, 1, 0.314, 0.095, 0.35, 0.90, -9, 0.590702, 8.808610, 9.223320),
        (10, 1, 0.299, 0.071, 0.27, 1.1, -14, 0.609620, 13.833800, 14.533400),
        (9, 1, 0.279, 0.048, 0.20, 1.4, -19, 0.623800, 24.252000, 25.490400),
    ]),
    "BLOSUM90": ((0.4434, 1.377760), [
        (9, 2, 0.310, 0.12, 0.46, 0.67, -6, 0.570267, 4.232290, 4.334170),
        (8, 2, 0.300, 0.099, 0.39, 0.76, -7, 0.581580, 5.797020, 5.961420),
        (7, 2, 0.283, 0.072, 0.30, 0.93, -11, 0.600024, 9.040880, 9.321600),
        (6, 2, 0.259, 0.048, 0.22, 1.2, -16, 0.629344, 16.024400, 16.531600),
        (11, 1, 0.302, 0.093, 0.39, 0.78, -8, 0.576919, 7.143250, 7.619190),
        (10, 1, 0.290, 0.075, 0.28, 1.04, -15, 0.591366, 11.483900, 12.269800),
        (9, 1, 0.265, 0.044, 0.20, 1.3, -19, 0.613013, 21.408300, 22.840900),
    ]),
    "PAM250": ((0.98, 11.754300), [
        (15, 3, 0.205, 0.049, 0.13, 1.6, -23, 0.687656, 34.578400, 34.928000),
        (14, 3, 0.200, 0.043, 0.12, 1.7, -26, 0.689768, 43.353000, 43.443800),
        (13, 3, 0.194, 0.036, 0.10, 1.9, -31, 0.697431, 50.948500, 51.081700),
        (12, 3, 0.186, 0.029, 0.085, 2.2, -41, 0.704565, 69.606500, 69.793600),
        (11, 3, 0.174, 0.020, 0.070, 2.5, -48, 0.722438, 98.653500, 98.927100),
        (17, 2, 0.204, 0.047, 0.12, 1.7, -28, 0.684799, 41.583800, 41.735800),
        (16, 2, 0.198, 0.038, 0.11, 1.8, -29, 0.691098, 51.635200, 51.843900),
        (15, 2, 0.191, 0.031, 0.087, 2.2, -44, 0.699051, 67.256700, 67.558500),
        (14, 2, 0.182, 0.024, 0.073, 2.5, -53, 0.714103, 96.315100, 96.756800),
        (13, 2, 0.171, 0.017, 0.059, 2.9, -64, 0.728738, 135.653000, 136.339000),
        (21, 1, 0.205, 0.045, 0.11, 1.8, -34, 0.683265, 48.728200, 49.218800),
        (20, 1, 0.199, 0.037, 0.10, 1.9, -35, 0.689380, 60.832000, 61.514100),
        (19, 1, 0.192, 0.029, 0.083, 2.3, -52, 0.696344, 84.019700, 84.985600),
        (18, 1, 0.183, 0.021, 0.070, 2.6, -60, 0.710525, 113.829000, 115.184000),
        (17, 1, 0.171, 0.014, 0.052, 3.3, -86, 0.727000, 175.071000, 177.196000),
    ]),
    "PAM30": ((0.1938, 0.161818), [
        (7, 2, 0.305, 0.15, 0.87, 0.35, -3, 0.479087, 1.014010, 1.162730),
        (6, 2, 0.287, 0.11, 0.68, 0.42, -4, 0.499980, 1.688060, 1.951430),
        (5, 2, 0.264, 0.079, 0.45, 0.59, -7, 0.533009, 3.377010, 3.871950),
        (10, 1, 0.309, 0.15, 0.88, 0.35, -3, 0.474741, 1.372050, 1.788770),
        (9, 1, 0.294, 0.11, 0.61, 0.48, -6, 0.492716, 2.463920, 3.186150),
        (8, 1, 0.270, 0.072, 0.40, 0.68, -10, 0.521286, 5.368130, 6.763480),
    ]),
    "PAM70": ((0.3250, 0.633439), [
        (8, 2, 0.301, 0.12, 0.54, 0.56, -5, 0.549019, 2.881650, 3.025710),
        (7, 2, 0.286, 0.093, 0.43, 0.67, -7, 0.565659, 4.534540, 4.785780),
        (6, 2, 0.264, 0.064, 0.29, 0.90, -12, 0.596330, 7.942630, 8.402720),
        (11, 1, 0.305, 0.12, 0.52, 0.59, -6, 0.543514, 3.681400, 4.108020),
        (10, 1, 0.291, 0.091, 0.41, 0.71, -9, 0.560723, 6.002970, 6.716570),
        (9, 1, 0.270, 0.060, 0.28, 0.97, -14, 0.585186, 11.360800, 12.636700),
    ]),
}


@dataclass(frozen=True)
class KarlinAltschul:
    """Gapped alignment statistics of one matrix and gap costs (see the module's docstring)."""

    lam: float
    K: float
    a: float
    b: float
    alpha: float
    beta: float
    sigma: float
    tau: float

    @staticmethod
    def of(matrix: str, gap_open: int, gap_extend: int) -> "KarlinAltschul | None":
        """BLAST's parameters for these costs, or None where BLAST has none (blastp refuses them)."""
        entry = _TABLE.get(matrix.upper())
        row = next((r for r in entry[1] if r[:2] == (gap_open, gap_extend)), None) if entry else None
        if row is None:
            return None
        (a_un, alpha_un), (_, _, lam, K, _, a, _, _, alpha, sigma) = entry[0], row
        G = gap_open + gap_extend
        return KarlinAltschul(lam, K, a, 2 * G * (a_un - a), alpha, 2 * G * (alpha_un - alpha), sigma,
                              2 * G * (alpha_un - sigma))

    def bit_score(self, score: int) -> float:
        return (self.lam * score - math.log(self.K)) / math.log(2)

    def evalue(self, score: int, query_length: int, target_length: int, db_residues: int) -> float:
        """Expected chance alignments scoring at least `score` between the query and a database of
        db_residues residues, computed on the pair (query, one target of target_length)."""
        y = score
        p_m, cdf_m = self._span(query_length, y)
        p_n, cdf_n = self._span(target_length, y)
        c = max(2 * self.sigma / self.lam, self.sigma * y + self.tau)
        area = p_m * p_n + c * cdf_m * cdf_n
        return area * self.K * math.exp(-self.lam * y) * db_residues / max(target_length, 1)

    def _span(self, length: int, y: int) -> tuple[float, float]:
        """(expected room for an alignment scoring y in a sequence of `length`, P(it fits))."""
        room = length - (self.a * y + self.b)
        sd = math.sqrt(max(2 * self.alpha / self.lam, self.alpha * y + self.beta))
        f = room / sd
        cdf = 0.5 + 0.5 * math.erf(f / math.sqrt(2))
        return room * cdf + sd * math.exp(-0.5 * f * f) / math.sqrt(2 * math.pi), cdf


def format_evalue(evalue: float) -> str:
    """As blastp's tabular output prints it."""
    if evalue < 1e-180:
        return "0.0"
    if evalue < 0.0009:
        return f"{evalue:.2e}"
    if evalue < 0.1:
        return f"{evalue:.3f}"
    if evalue < 1.0:
        return f"{evalue:.2f}"
    if evalue < 10.0:
        return f"{evalue:.1f}"
    return f"{evalue:.0f}"


def format_bits(bits: float) -> str:
    """As blastp's tabular output prints it: one decimal up to 99.9, whole bits (truncated) above."""
    if bits > 9999:
        return f"{bits:.3e}"
    if bits > 99.9:
        return str(int(bits))
    return f"{bits:.1f}"
