// A polled sensor value that starts an agent turn when it crosses a threshold, with hysteresis: the
// trigger fires once on the way over and re-arms only after the value has come back by `hysteresis`,
// so a reading that hovers at the threshold, or one that does not change, never costs a provider call.
export interface ThresholdOptions {
  /** fire when the value rises above this */
  above?: number;
  /** fire when the value falls below this */
  below?: number;
  /** how far back past the threshold the value must come before the trigger can fire again */
  hysteresis: number;
}

export interface Crossing {
  direction: 'above' | 'below';
  threshold: number;
  value: number;
}

export class ThresholdWatch {
  // Armed until fired; the first reading already past a threshold fires too (the state is news).
  private armedAbove = true;
  private armedBelow = true;

  constructor(private readonly o: ThresholdOptions) {
    if (o.above === undefined && o.below === undefined) throw new RangeError('a threshold trigger needs above, below or both');
    if (!(o.hysteresis >= 0)) throw new RangeError(`hysteresis must be >= 0, got ${o.hysteresis}`);
    if (o.above !== undefined && o.below !== undefined && o.below > o.above) throw new RangeError(`below (${o.below}) must not be greater than above (${o.above})`);
  }

  offer(value: number): Crossing | undefined {
    if (!Number.isFinite(value)) return undefined;
    const { above, below, hysteresis } = this.o;
    if (above !== undefined) {
      if (this.armedAbove && value > above) {
        this.armedAbove = false;
        return { direction: 'above', threshold: above, value };
      }
      if (!this.armedAbove && value <= above - hysteresis) this.armedAbove = true;
    }
    if (below !== undefined) {
      if (this.armedBelow && value < below) {
        this.armedBelow = false;
        return { direction: 'below', threshold: below, value };
      }
      if (!this.armedBelow && value >= below + hysteresis) this.armedBelow = true;
    }
    return undefined;
  }
}
