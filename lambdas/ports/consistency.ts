// The two consistency levels a read or write may ask for.

export type Consistency = 'eventual' | 'strong';
