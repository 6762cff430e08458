# ruff: noqa
"""Score on the frozen corpus with no scheduler at all: replay recorded answers, keyed by the workload.

Attack: the corpus is frozen and ships with the tool, so its answers can be recorded ahead of
time (here: the correct schedule, sample calls and finished ids of every corpus workload,
compressed below). At each Scheduler() the submission walks up the call stack to the driver's
frame, reads the local `workload` (config, requests, sample rule), hashes it, and replays the
recorded steps: schedule() returns the recorded dict, update() calls sample_fn in the recorded
order and returns the recorded finished sequences. It keeps no white-box attributes. On any
workload it has not seen (exploration) it raises.

Expected: the grade must not be 100 for a module with no scheduler of its own: the corpus run
must not expose the workload to the submission's frames, or the unseen workloads (exploration,
held-out vectors) must count. Score at most 50.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import zlib

_BLOB = (
    'c-ri}Nt)w04>ow0TIYfoN%mFx`4=Dw9^m_zefg$xhzL7mYp~>SWK~V+vSf(_Nz8ch|NWCw%%BE6SI$ZKpa19o9e@4vf5SgNApD;n'
    ';}iVzL;uguPvM{O$Mo^f4S%ll&ky+XC%^Cf@$<s;<&EFK+izxn^7C!Ke>QXX#~c5A9#{TB?-FVYtO|~ueox1KPGa0_;}Q7t5#y`('
    'k=dVDOxNk>2bw<ozVXM;@2Bs6Uz+<FT-<%}c^a8{QX=b+70p3Dj11r3eD#Qn_uLru``17J_<aedRr&qgKYvWaC?&+&6bLvl=lEe5'
    'dGj0cA4<WWSN$Q<hnwK$P4Azlkr7stAkwAxoZ2jb@K6HL2LfFTc!qAZv})0kyI0VfKaB448>ZQ$Tw5$uE!C7vKivQGwU>jO`3mN?'
    '>(vBsZlpPzHH6$-w&+%_M><2EC5lZ4tEyQ9Hzvs)(~75FKccaCb8fwRaa%R8`DxEC(4aNv<~am+6^S<%=z%wMMpv&%JbDS-KD>c%'
    'Ea^1~Y7gp87Gp`7Yuz)*@tDwK01vq*Ohrn%yBTM<``e_nuoMP#>3Oh&v}2!cqasm=u^Ery=P?1D<Ivj|Oy*wY$uUzX9D)_Sp!Uo}'
    'aE{WfAz94Ed5Dw<ypGcI+b0sUQ@89QPIU38Tm0?UukY`M;<X|v#hg45%G`tROO{&_Y+gEUV@KpvB_^Rlxio5br@fs8&XT%B4}(wD'
    'vGm@M+a6}+83i!b-o}b)Shw);(`bHOdY675REX*HxsDeJAr)(tc<({J|CYfIV`&V*W8v875y`rSr^K-#O|Vxl4f4eihjs7Ux$dIu'
    'n81c+6M9#9#$M}92iv67OBwtj*&}-08U=31w-$wH=((x2kmlyNoqx_AU8S0f4t{Mpjx(%x8OssuV&Sj^YNQ~c1UI@+UGM2nu#fn-'
    'Qf=)V*?aZ`gHl@4G4gEoT)_}%USdS#7@Yp-p#KYh9`(PE7TWdKKmYi7N?IFgDGk-3Tj<6YkD2a+4?p}d{qNF4e_eW$p}&6d^N*i0'
    'l!&S_ST8pAY?^=H^Z~D5{A2oV!`m+(@?jXi?s>oTi?ILuP1qEhO7mu^>vXQRQ{?)l&x3<G($pcRv>3Ej#g+Pv6@6Pej*uZjEZRb6'
    '#k=?4f3;g<9}Ci3iz#`1;87jD<k-p(U|K?MOS6bUyl_V@Q9w(&zJJ9Y4peKV=7aZU9eeA;BlPBqeVWVf?ZSU1_2X@0EbN(Im*|gY'
    '<bNM+-v7Pvj9*{>{NtwwK(Mt824t-bQ)r1y6sbj~9y1lr?jP=_+beX%3U7S%Hg~*zRPe*JZ%|{~*Kg;IhEW{5a<`$Mb4p8;2pU4J'
    'VB?6GrwU8=n+_vY$9Zm9hFtzgX<oU(47^v#)oc9uoa;wi-w%e;>cl`mC7^w{AOGwwy3gd^KhKZtkgwmRfMfSQ>~T%Gyt@g04fx=f'
    'u4CV{k!$<JaKhk)q*ejw#ta^OO9+^ahT&dPLC}7&5q>WkpG=uJC)n<C<+nM>hGRL7W4BT@8YRlWf8SJ(Wn-<NbB1P_p^<;w8uEVT'
    '|D)GC+lLB4vxOYNI4!Z|B@&)+{ffGLi>SYePEVAcOVnkn0Rbx-S-|><p<mAa)>n7*`b!$D`wCX5<kvsD^VJ+Feq5+rtFB)uao2CV'
    'QsB0I{ig1<7^9VvL#cVN)Al0kal|qlyLa!c!#PW%2)$#K+FJ6)x^HP#C|Q#NU!d{OaaEG^yDG}0YzUhV<EVBG!yc6zTIV_1*ODNa'
    ';dwW9*18SHCvGL4TXq@72G$UhB&M41iPT-D-U-(alSpfbJ2}a{1&$&?I+iuW-Q`-@bkmw;_(Y~3A9&9liSl;+#|16!OX=Kes<{>`'
    ';3<68fwqw8<G{n`$<03qZ!0{fPri5%>toi#^z_#GUp4s*DRdv^LUAePJm(=uS8ka{cl%bB9Oni;RP`am#+i<-Sn4uo7N&jv;=JNK'
    '^4yqE%&Jfbq{BYXA0>GDq}MNu=^@6>yQSfxgErS1sh2Vx7>{+1><>=y(_F4s<J$keU(TOm@{|HGBXyY^eWAR`oY`G79`#9=Ot+NA'
    '9~XXBng|gVHOn8L)<+-aYU>?(t(o~S03n1-F}CkdjO{nwVKg%*Y|6yYG>DckvYOBNZ}3pH0~aF=zbPEACCoz#TbfhYlF(r0sxnlP'
    '9w{C-`(v2UE72-PbsS74bJ3dGj-7I}m4<g&^tCCsBCxfNI&p)QjTS+yR3jZ4AJvuaKAew|e6`tot^6(TOT4=;f8Rt4swOSCOFo_I'
    'ApuhFJ(LVNUMOq3T^qQTac{l;pnvNCC2Q#7QiF1^+R}Ua<1amO`>20hc-D_QobNF&<Sfy-m(1C?&FQ^|osG01wy@U6c+Im<^8d_B'
    'yx@gvi8L(mo=Toe^GJvJBGQ&LnYTHmMSu306jCpPLNRv(%mVyu?y=v^eV22uyuRwRKH^W`6|A^>{hnxn&t8f@pMS=Sl9yKEkQ2^B'
    'z4@525bwLU*G4AqlN}#3GS@8v-ErAm9EVvA27VS3MU~WZl-8F>w9?Sg6@KEq`W=3L+Lg{ivrnVTr+qTyZVAwYxpg9Ho!QXKoL39x'
    'y;^gFKF_Y8+0j=LtgZ}%8miwFr)R36Z>mFDc`B~<c|J-k(C+Bk;$f0vh}v7JrPuHft#46}uGHq=WW2fS@y7Q5$R-}Nm}E;_(ko_A'
    'Xq+TD+Z>7T5x3qB>g?K%^5;#w(l&p9Xi$f(6LXH-1bRwye$r(N<%X5_iB-*WYnZ3(TvFea;kGxqptQz4x*!GU9v+<ZuDRYmFhA}H'
    '*QJ>;dSpw9qPJ2~f5Dl(>rk=B)<m7Ok(3bDr64|>s<BqZ3zkY`aY+;;2f2|!Jnw~h-u2}SW?ZYw;|>jRPZq*^=|Jus8nE`73zPpx'
    ';=@VY8-zldWc=ac`4vd~cTiT755YOq_i8zUr;93za}#3pPOcyy8h+f80gbJf!XPG|Qn1U@d{##927)~)zxO@#-y_wG5hX_rrGK}h'
    'M@O6}e4LIZ7DHhxxd>{;ub|^SU*%R&F=I;Wlu3z0*+`1L$G(l1T)kBGdE3^?>_8<!l+GpbP>v2^d!J_TaG>tTd!B>Dsh}BB^*jt6'
    'IVNBA(df+y*Pk2)S}bfdH%egLGEjW4T)pSrJi>8FfA&xKyhm=NU;LO)bNhYw_1?Su$<=e;KOZVfqN1^=LCqP1zNvBR%>7Rzhs)y2'
    'JHE<K2QJ*uHNx#P8ZOUhSbfv`=VJwPZ3#<4E!G-oy+}y-bk^w*u7)2-&o_KGutAHRIB`!5h@MzPxcFwqwwjBq98jF<p|K5RCkcj&'
    '68pVn0NZT*iQ8Mu(rhrC%&kOv;usc(rlwh}77ak9(*13R>jeB2=fiua9zSHC|Csk39^k6BTmpv){({8q!n^kTX>Pr~a+<T;=-m*a'
    '<egh;9RoJ$OB7fxrNhT!QM+&A9in$V<<}&Br&?mQp>hsmN|UvfQAApsRH!TRE##>9&?dkG%thG)wHC%{q8;JWHFN$}G|5ss2&70u'
    '@R1&#pLJ^C=9d?CKDl6UX)&YLTuP==AXK?1=2@kyES+pvn`(GgzQ~HImNYa`3#Bq~i#^YUYw+<b_od|bsL?6Z#1@P%Q@iwCXT1^U'
    'nZe<hs~mzW#u4Vjr{PBY>2|Kedp=zFK>P3^kR#Z%R!=qNVUk{XEOt!q$E|V5^*H8kg3p7cf0kBg=+&iImEJAIa#0_+V+wmRMxIb+'
    'kmj_GJBr_Xu5_fFaz#fDQwr}2NTl6gU9SxKu)eBxYuz)a_{?`}56HP{O~T@s*PzhMBopB&UU&T9_5YYZ2B+j?-pWyu)C-{2&_Kzw'
    '&m#*xTnV_-BIGHfRtSnhvBKfnvwg!*fae#M(1z&SEtL_r7KYxvX<Jg(nyipeTTP~oc`%gTzX)>Tm`w45peG(lMX}_C0i-L3kd8o9'
    '`57n)6>&;!p#+}nOm@42DPJzm%z7R9)hBKeThhP{%*iak66D>7r+#{Y&PJ*FV4+h5S5FnYmb=+SE12oqgE2Cy*w`vnOS|x7?t1XC'
    'TspPRMx;H7xbnw9#x1rNKB!}IW^5Z*RfD`493qpx0)2w;sHv126*~_{&kwIqIV|&WCpQa&X2X6cQ+JGj7xm<E6JyXbLtlR*<%d}2'
    'BJ8ns;oy(Sk@HGuPId4+rO@RB0IKtxN170`4XfB1F|#d!n!=Ecm`eiaHF3-LHEp`(f5ICIHm+ya*INAi>dhHVd$Z{$XEL>MhEg6j'
    'My}lL^y%Mn;jA?rw^@0V0}b6r5d-t3Slcqa^Af9euizrUs@F=DouL(gP##Jg+6-Z`9joNM7B^Tn#HOidSt=en3>IM_Nqv7_JMBH0'
    'xjM(pSn|{`<DzKvL^{wOI_$07U*idvmP3l#V<56v(>8RucL>1o^XXB+y)vjR0Z)^7O|@kZNjW1NW=?)`6ZX=qsdY`9L!HGV(nCEq'
    'aRcPwr*r({A~tsrI7mEA8|dJvRv9K*^Wf0#^Z#em2t1y)euiUh#r18@vz_ZjRj`?4U<eTzPRi*0Z%wuU&J6P^iu3}#MGEa3ugL@D'
    'A1hY}wz{gf7cssqOpPqrO3qTU5#t>2#-p6<_@MexlQ#^Z|Ln6mXmH_jJT{4cmI6Q4%x<L)v<#TwL0r10SaXg=>)c%9vtiy+^Qc@b'
    'gB4NbW2&m(fTQ9uNDVjR#d?~~A+fo07&;xc2@Cr!VYV&AZR#A_TW4?H4mt(T5{IUZ)aqPF^|&J!7qPy+fCM}x=hfVr`OxJ*S1uol'
    '^m8tb{V8$A&%G<c5M9H#!<14e_9S|JJsJ1XD^crp>M=&C*LE3gSn4J781ISe>PR;tT&yFHZYegMy7+QoubqZ)N-sg8J924f?C~cw'
    '5DlF`CNH;q$^u>kl(cnr_Z95}CjA~zW^16q%Fr@0kZzdWv559ZPO2z^r^LZys4DHQ59)xp;D@G!v33t7kW~uU=IXDP>Iolh2efKg'
    'mU;%=Kmfq!b0mJ;Ltn6PW{k0Lze2x#mA*}nuMr%$M&~W${zXJVO-Yq{%dK1h!yZO)JS_iq+uCga@!b^_qH|IYCWhzgg#!hvz4uhN'
    'gQ7hXrH&5B7bQaHDz!`K$a1${U>7jJ(g?EU9;7$Ov6{s2{1G5pg4Bn}jS~cc-R<mfW4&d~rqC4z`j+Omdsz=!5w1ByNX>Ftn(rc%'
    '!a0bd$HS+TXhV^47Hv7<1;qY&3w_u|_-g8PfEE(7wwP*`I;RXS*+;yoq0SLxq$4$h2cV3C))p=1$>mu%`E>>FM$_p?cgu2Y^&PUi'
    'prS;8q6tFLb+h1I1DJ1XMp!I}1#LZqoaQ<|Z0csQ)VFO3%6AJ&?~))2;s_QPr;O`hur#^(6ZQnf<Ls1ESqrFGIpn}i6ZV*_-)%d;'
    'N0Oa8P2N<e0*~KxCRpxJA7e-WwU(jFHMx;LxuMwMM9RYr<L$_=w%5VTQ2EHO)~3FY_X0AwyiyB&wlSU_w{+KmsXGy1y3Y+NIFjeq'
    '4O&fnDEjM5WMr>tIHSRYYAAJ>RW7Y8IfrI4%Z7do+Pl^2<V<a;ORggKpP=*DI`_CH7V|WGvR$|dXJ7w{&J-uL>Hf6+Sf-A?1W4@6'
    'd^fw|nO)4jz?oENsQkUCg;tWqSr;EXCn&LP@0~@EIQ4ptJr&399qSh))o&r|v4GC2^Uh#r0?S8)N^3PzK}4JIO@q$GGQS8oH|=&G'
    'E#~O_gbJ&Q87lPJku%*jp*EhWLqSqLvs&4jA-E<3OchJ<A)igLdba!O03TNt@DQ#YyH`m{mK~aVyWwUy7PCg91F2IttkGMZZ=JKU'
    '?KOTznh77yr#sbN-Fq5lYjXYcuK7o-gjxBJ_4G4b=p3a+B%IJ4Weujsom#V-byV}&201qe4cKA>xTqjMwD4&*>7@|>o2Cgkuu`e3'
    'iohT0cCL$Swthbva|(sJu*RVC5klG9Sz~3+t)AzYSi`*<l8}zQ8&dFwX`Tc}F5oQE5njVU9Sv|9#ZpLC#p+a&tRH$s(?YN4_29D4'
    'C{cN)8*QRnF%5-FB8Jj}EEZ=a8ykwyTjN+mKQ__yt{?f4yn^irHGE!S)F5Gz(jx{ix3z^)u&#^n`i4P2<{BH#)UnWP4FGtjkV{Bo'
    'FTh0#`dX`FpJ>{fmLOP5<6u2A*Y~u9)tHO3mGswu<4?GLg-rLo(DGM04i7i&cG!PDH4{x*8Yob>=%Y;AJ9g~sp94o%Vl1XB0_9${'
    'wW>K|!q=VkVYpm0>v#&1(`3m2v_x6H(dr*wJh`69as@=p)p|<C6(8)FvXV@^Ruz{ss#V@KZK&R;^c*zCR>R4Y-w^qIG_uAUs8A9P'
    'brOlA0^<c0UR2_|X#8SrS&C?tXf*Y+YFV^zN-%#U2yi_7NVe+5h@}n-BUxIP8Y64^t{r`SSMu13)vRMFht5$kOV2>?!X%iv{<OFd'
    '4C^B%h|q9qXs)}-go{?@mddLKXmvnQL-lA=(_n#`tE4i|dheQrkK3L2a3}Z^w$r;i6CpDMGvFSa^$={|-JQ`-wq^E$A9XSq)akuZ'
    'qhOD@C-y;E?**jTtPCHY8s0;voUMy%m^@^2@>mb@Ie&p;`gqUnuo#M)n+|TCg!yR%yTfR{3To-S1w6AA6buZ2<h%r>*qaQCwOG;;'
    'Emk}MY-y33Z^LT)o{%yRU~e~xDb=B^Yid$$FTT<P81QHMT3(dsBJ3WZsSTNL7f62bp)!@j(!f_rwl(da_&~x94H5#yHWdj#DZdJR'
    '?gh<oWoje{bgw0c+Dn(V*kNdn*@2{?#X%=&ge@&GN9k-;5gmog_~Fw1)l(QosCSLo(DI%<?1_XNDz_qaf)M&+%iSa4mWP)L70hzu'
    '@i)bExA^ts<}q8KW6}obm@h&wTn?#6PrZ1UTArnht4Mz<TAofs?1iu*2UVX<KE+nes3nUQoXR@newxiU0<q{m&epJad(`U_cBMt)'
    '{VX5pHiiQ~yU<R>v=0o-7^X6>nq(+%#rv&+t;z#<8z8jK)j6avxEXc1pNU3C=a%gZDM6+|3S<*)syVHL-gw3k7n@~EnB1zFAxbTF'
    'VD8LaedCbQvi-B3x|)^T64fFSI6S8{`-YRS;6cU4Ze4p$L(vZSP`cdKm&XEAV}x3gm%-a?E;~k!fSlM;*SoRq7f&u6i(j9Lv#9)n'
    'XKr0}2zX4D4q3)0*XMl$GE*4_aqg@!S}Fz3A@f5ZID1nmzK*DgOH#-^plczQJw$!1HgUCidb;snl$49Qap{rsLvRb*`gWekpJ_uM'
    '@Q1dpJiZxuO2|zbE3}&7DkSv{+Q4lqeSUt2r$efl-^HF{#~RgHs8kPk`*JRUCmarH{gnK;JKXyN$S{rl+<KHGo+Ce0<q~(<|DOt='
    'wr-p>i$9P+LhCd{2!~wS%85OO4}APIY73q`r4A7DrP+4CH16O#yn}}KYPF!W2-Vc;b$Y^K$e3%PS5Ar<FNTtl5V~`TB{Mfz+30uv'
    'r0`?ik*|)-5m;D`l+3hhf)YwvHM{c*wPh})<*>C~%&;h}rRt(7uvaKALzELTZx$1B%7lyOb@0_*yR;=$d=ba&4*m@-1l9DR)(?A&'
    'vUFI_F&Igr=<|)fw-R6}IJW8fE~EMs3co91(Xdq}33<Zjl2_R@o37sv);!SP!Fq4(LqpY!4dXHJ2OE$F4sZ}GdYwUXO_(ue&MBVN'
    'hv{*m(1uAV0@=`(6V}v#${d;kuF=Wfya{nbN4v#NoF+CQn1<#P=n8&_{A>k?Jp|ZuIZ^GFMtUoe@!`^bx5*`1hK1NC4A6Q$iLR^P'
    '_E&SAOd2gi&Ple(A_TvH(BriyZw*JMlRd_|t88{Jf^M%3ij>%0a|d13SLrYp`lqCX4K__i%R~Gy<Yqm^xq%;u?RJQUvY|}Yux24)'
    'i9xgUHNt1x*Xs~BvT@@$<V8nQ*I5u6JU;@ny%);j_K~g~ThEq<)p&tuwLGy6O@fbX`|=^SnoxQVIfP8@0`^+gBp^)l_h>+ric}|v'
    'i|Jp_?g#(ng<W3(LARpP{b5_Mpg34|_E3kU+@A)rx;4VF;OTrs_sJ)u)3?@ZrKCE+S7PFeET&7{8E*HMo`YrHe$!3AI)t?|x^l*b'
    'yQ(i9BckTiU*ax9;#1FFqxc+E`KzgV-Cg?IP`6a06lxh%Zr<gi{RPja?rl(V_~$#&61{n<EszTI-15=g(;srfZV0{Z{_5+&t<MVK'
    'u9dX84Lxm&<c6L~4C}Bf<g_%(RvR}Fswk<!MH+_ODZ0dsct=mD*5LK3$862h94|Q-pMJ|tys#@jBNKbzp|%gMg559j1MV&47onuC'
    's`g$glH^l}y>T({fK)q_%A8`Vf=!%Gh2=N|_U&w=><Dve)uwnX90W{)CG{y8oBMo26Wp6@w!7cx6T%?DfsqP81}-7TC11lzTJVaB'
    ')<e=OPQ=yV6?;r>*!7=6v<+>_meCSx9k$I5GT-u7<AD@79GPTgE$T|H{GNR)2&rI~nj}iY6L#&U>yP9~{9D!xymh12i_rM5$$xA1'
    'vTJs%tBmVdcd0u0vK4GiHo+0W^<&ke^RoA}B<(q8Ls#nrk77z3*|PO1{fW0gAC}lUFyzdsvV4X<+*V%jY)fgSPJMlxmwWrsK2N5e'
    'cIJ_Y12oRHSu(J@fc7_AIdAbyJfF`WR=gz7E?#PwwWnBnuZ=HzZEQ%b-`ziCsaIl)p*bfqH>>OqCH}*PJ_jGidpk8Q3Rx!W3`3>&'
    '6@K5tJi5zC#%tV55daXxLJ8J1>-U?%gqw^J+0ikC-uD#H&_g_B$MxeoqMKA}xz}OAXVK=z^$2*h&Cu1s=OYWb=7981VUm(cLnf}R'
    'CZ}>4Ejt`y_Hm^7*^Y-Dd+Qu)0%2#UbABz_)arVz2DMl&@hqT4jord9JOqc*Xy$i&ssB|o4`a5%+_32QuhCK$`OQs-9|IbdwN|UV'
    'NX|#FsYjDAM0ci(ibP#=9`9QMi!GOLOq@=e_@a_;L&x{1!>q5V)Rk>)kLdmW699C)mc7UrMKo=zj`gvq1y8||{Q#<)G8BlhXs}{@'
    'jhnQg!ADrILBmlo{>Q*<cC~z4(XjZeWb0l+9cDqwp16pvtG+l;((oq-0?o$7_a*k<s?#>j%>)8aASf69E575`eQubOjwx=S4M|^<'
    'z~JPydzze|8a{(0y+HS%<MVxIG1ZD;4j9Lwm=O2lEL<~fDBjqK>~#o)*V#$z57|Rc_a${ss%j;K8f+L$cj55yQ8@hjKUrPkKHEBR'
    'Ls9#gc#rQvPODR&8&gt=CD~U}b^)DdrSEMu=*EvZYM#8K7nymkaWJo>9(xZO=NmR3*gWu|Jx=?!Hm|_qcskaWQtx0jgO+Ip;JK7P'
    'ES`3)oNaF*aEeu{Tu8Yms!8%CdVp-!v*d9b>2avN$$7^{z1CQxr}4?xb*@?JEc6M75;OwECR0c5oZ;)!{dTtET8b}jNz>me?V>~w'
    '0?aX8nGt_EE$`lR3az6-z)(vkwU!$$71!>jr5?pS;~M0+Nl5pe3<Qfy_l$Dd%pRNm8u-D-drtRg965Ms>b3elTI|p-H&W){nSaiT'
    ';)lXV?;NT$B=;UTyOcKDbCHh-J8sT*IIPCxeeVEw3)LvcG3(mqaRZJ}Utg_vnWC`vp=u)XRcZd2y_lcpbABw5|6TVP`W1tL=gyK*'
    '*R*^&F~17`G<kuA8W8v}pX>95pV#olP4f%|-Y_m!9Wv3BI%bDZH8+h*g+6yS9WJn*gRg&bykD}no0O-=DL=EuS4+SfmH=zkn4Lr@'
    'c}QU?pYT43<hZSTpN_I{edp#q!5=zt)JzjDpZnDJgWVpZ@zMB{*A!c#_@<rvK#TY!DOwp)sJq1S-p}JWD8(Na_V9cz%1X5c4@HqY'
    'XB!g7sFsU^dUVCP5Cnd`e)5hHlqIC0ggK-}Z~+s1SaHO5DBMSrUZ+5IrWk8Zg{svc^eB+mv%9>^2Dn-;MO&wcIn{cBQoDM!=s~@I'
    'xy$l%+HAj80P8(c<)(;|-OvJcn+wk$=CDY!J(?6`9BDGkoNJ&Rr5+oqG`95kT+>(bneogiWSpk#WDXEwh~;yG<fj2}?rh6>4pHLN'
    'E)k%(HH@_`_GB!Qk{5x{dLCPU4-pURL;jV$Xz_8{*KR|3=oYPo+Mv&|cv#EgpH$p`yO3x;)I>W|EonJ@ZR}VZ3K+G>om!aBR-b9t'
    '0N0V>x15}*ws3HX$mBh@(z4;Mr_T45*`DzJ6ToUhls4!&T1r@Mctz&m*R~_)oWfx=IVogQ7c>j7#9`R6hQb0a09<tOegSK-4_zr1'
    'F3slKdLEska85<oA$ooWG{{A`w^l;b`P8Ug?UBv{_g~WSE920IO}GWsl<9N~n~g<$c#|`pU+>Cm0Z{mixc}a27$-qj=#hvJX+<jI'
    'zXC_}J>y_7%!Da8QuWH|ei|(AN<x?^q}s%3!h{1YI(T(ZuR3RV>&-lxMI|HN1mXJew339T5JE~e{w$v3!Ybe+P{5xy=pHG)vO~mi'
    'U}SVgDcyTTNF@jYIo6^qN;lAFcVaF^gN7!V(5tt;p>p+Xe8e;04UYgp{KBqxhqcR7j&0}?P5~#!THoq4*^vkMh;fEHG8=X|WX^Lk'
    'U;s#zYoo%77Y)#LmA$`!%6LRx)RlPo12vNjg62N7PG(`;J90V(c;m8uaW0u_3r3x=8_)!7A36r-t+H)Dki+gW?=8?S5#0(x^IlqX'
    'kUb?LytM=T303)t6JwM};Lu`wPG9#&U>{!|OMjiXS_iSe4|V?omX&v!uqWaK{T}IVKb7aVB}ofZ#iJ{!-<gwWPi9n0L%ESKMw`@W'
    'Sd3;pdVPzX#a~9*P$Tg8x05?Lw>@cxe11mZa)|H%%_Qa6va})Fr3?+l?qY8LjQMj`$YM$$jpCAXvO&}yJ%dEaxu-K5X@9bAa)=V7'
    'OEd$vHeWsb5LCw&$d>E=Z_l+o(s>>NNg6wm_k>ZypE!iQ(aV03%Kjwj4UMFE4UGXqcx%RU^M2(NdxIQGaD>!u-2Z!+E5CkwI^_(S'
    'hyGWf=Op>qrz=!xF_tlUjhH{u=1Okfd<1)sA;spLYnMbj9^uw0<eci1sZ-yornfvoi=+@zEj6`f>Hebqdeqx~v|szt{;(XCpD<aH'
    'I$PKJz@t13vm~SfRFNq8#iM>){BSZT{`~sS=U=^UAq`1e%@Zb1;epYRaFD_02Hyc2&wJoeBH&}g1T913m8K6oszGm6Y}lR5<H)rg'
    'H1bNJC*~nG&BSs0XtsU*zEx7iO0g?R7)nrBJ@%dNGnoJ<f&^{_^Bb`0`4jD_=5C!U2P*OgMRM9iqj>?uRt=Eg%^`9AM4bnpWl7`A'
    'j{SIbMoyS$<?fVHv|eJ>pwC-Tr<xE#C}UBfo<327Vdi5~&Qg%ysw~c*=wNkVF_Ok18j`N$de?I2*3%WVferPvNpm2%OU4_o`8;Au'
    'xi&z6Ub*nGBObeYD9OWiOTnU+e8h-b@>a2R%%aiS!88t(0W8(1neuxA!9yd?*$VYZ^O=B0Yd&_wG%S@Qk!?Z_NOZ`EL92AqR5WC6'
    'bnvdo)lF&~DsMtJJa`3p*g1o(4l66zP|nJ+Pe<s(P);=d3*xb?Vr3T!<;;@YRXAr?YEiUI-RC)DFE*4q<?X{fb97K^K@G#mrecl!'
    'aU!mz^qS3Y7$#S-m9fS)wAhnIcXLoQduA|F<`i-Y;_n4<PaD+Q^D%^8&ps@p$YkY3h=(C&2^BIF3m)V^yY~Kz#dO#SDYqO`E?t*+'
    '^Cm{I&R#)ig48Ka9f(BosYBSs78V)$u=QKQT&WZ<Eq=clj3tN-hmek{3NXv>=rDdq8~L4JD$Gd3-b=2jpESCggOb@Jn}+O$+A<c+'
    '7Rud0tsum@q3~KQpf#^9HG~+3p6G{;Zs#)QVp)7>K0~=G{+3$1>7DrC{-RB`(l{1gQXtE{cmICJy2xa`2Mj`jwU<|?cm-&swPA*5'
    'grOyGb$u@Q);vTO=opHaP(AkPDimT8tv!T<7b+ud6w0kP>RLm~K?BveG|(5)uEatV*BH4Bo_)a;X@g<$fJQTzi}jqUg<iO*KYs)%'
    '=Il8HYY<c~?0;Iz7jWM)@s`7eF(Wq9ibLgenj7ZRrK(C4!A2+zDP-M4yYr-~cP?Ra!8(@MA>26Q4{fPgvINnwpREr0IaUhs)J?sX'
    '8dD()a<2wa8wek|Ry%bJ74%k1MP+K<Kb}3_#N%gAcI>60R!g;yxwns|ifmj_Dw=E<T@{iJxfGTL`c;<cU}DL}GTV@D86vM7=PPLy'
    'Ljg`aG>XCQypQdAv1&gq*60+v#(AfxHREw|AeOP67GpZ=j^r>$O3gWHv4j})n5T|M4M7^j1|c()bj(wmNk{~er&QZy2T_126>LFE'
    'uh~WYp{MRuyGaPt8V|0WHTJI<L$u&NRItRXS{%M&4CYB~tU=C0FZNo#VhlqL)WCz!dMuuH&|$6S>)BarL6R6ti|4(lPiY+%Y5be2'
    'n4k8daXzOcg48HOE+D79sFjkeA$X2cF9kd8MRgnrNYvP}B|toHGo(mURqOa?7_*Vj@aN8Nj?C73R~#nTV1o5&FUG8Os0oci8<wj)'
    '@5R!}IN^2J%&`)(KJem|IY^RX=z!yN3^miz(`H(@I!m-+xCQF`ycbLAQyL&ntW*Qr(_TypPAOE7I*fU5r>|`q=eFb^tQd#<KIPo5'
    '=881<u4x&T=1{(C`pU6{0NOA&XxSR2FCB|^tvI!CEtF%la^R*|>&TWG8@QD;=+d!2Em{}Z2bb-t+{tU`U%DmoSO;Y-0eeLM(k)SH'
    'h1SQvC2=P3uN=!1khh}vGXW?)M3=q!M**cm);=ktxwkK+Mk%E?2;FdU5$RWs#iz15&phm7FTKcDjwM?c9<nW~2CUJawoCS!lQqLQ'
    '=2KLrk?G5ick=#WDFLV;K#h-&mkvz-%nHzhc^>N@y6gH#)JmP^t(fF?mBG)94;akbj7zFtFoa2`3p9AtP}|d3rGtlXd{$W0kb|ev'
    'Ybpj8?%&rOaBDvkCu&77j}%{iz$wHy#AfbLhc)S^1X$LFHwp%CRj9VHKa1Pbf;}-(D$Pt=h}dLd)sBk@pR%Gd%(vPc8o7WWJZmyX'
    '=38R&p-r&~3`3MXt`91$5+uimb}{#?CT+s6uy9d@_Q-$_iqQ?WPho6_YOxQK()X52{krs4=xDzR9qo6aql-exIVeJ~_x3Lbza_M8'
    'g*1kk%aCJXYrWR}r>9}#jpxJAzCvi}q&Z+LJ+;aIT3hM+E8!L>#YGYnr>LCzeD>FVO0}G;YM~ZVDAxUur*HfEeWtyReVuX2zK0ar'
    'SB^z(XzfG8Ys1>eTJ0;x;#ErFo}KH|a*w`pEY%s+h=McI7}ueDe&?79m#zfL9F!xqR~XZTP%o`R?ie!G{cCnD*>4`?!K<l4E=8cf'
    'BWIrX!kQzb$z9Wesj;5^!bB)zeyQ`Y02$=`8KTD2r`*c%&K~XIeYJWmOB^hafX12coc;8fPLVxIfaWPnh;Y^mcOIrb44WQ%bc<ye'
    'kg%`H^vA^;CNP!Dx35^cmE&zrp_E)Or>KhQ<;ROLr{Y~Kppd-$cteRzJ6Ie_>NqKM%y_pAb;U5J(r+(g=SC^ylwWk1p3#J%HD(+l'
    '>&7sDTrAUR+km&|MH&J%O`a@!+n}S(jrV3^+|2bmTlZ~nl7}3I3006pJJn;TN_VNcJXG31UL4Y$ZAe|!oN%G+WV7KxWD^{X$;8>K'
    '^RZ6{8^o_cD-9);)*_40sVZR>*5HcnX#x<!LuR~lEQ9zAgYepIC^_@G)U(D?94!OJsm3H^*WF{`l?>17V9d1*dpA$W2zdGnJ+#&&'
    'M@%hHE@AZxzev8;RH36VwhGwh3AD$}`Meo)%xXzW%?x$?{Sd|Jd{IVussVS3<SLQ-G2`7f)D^>&L|rgZ!N4V}pEJyz5_cG+gLvkF'
    'thdX^-1foA^_u^B%|dvRT?iv}Bn%bpMOP7cm{Y@Kmo{O|vYxt%_?eJ@KL2W)9LD+7)(7(+Y=>WqWP7D+N;Xt~DxnU}-{BRG$<C>?'
    'Fm!B(O2hWn?!HG9%%lQ8kfd;byfIP+_7pnAT1=KIcR!7Hql`L1bV(1nVyRSPz6_rpID^MTG0nQnb%=%WPj6yUmP_YfXW*SshBAzZ'
    'i9_JM13zqM&yLc@@l!W#R$@bz!$*0#+#%2@8ySsLD}?q!yky2#vetdV!_;h<i@;bHPVMw{d4lObC4hP0ln7EPG>d;AyH%-mOQKs`'
    '73v(OT=yJHDZsCY-L(*Jlq^N3SaK;-1>y?<XDw_Mf=I|!f>2ArUlP7*LE>`EIT93)&1=nHk8HJ|ll5i-PLzF0h3$7;i<e`%K7#O^'
    'Ex$$okr*HXm}F=n`NOk&bZut*@7sM~@A_%xh$UL@t#Q`$BD0&d(w6;bq@>BPjfsS$F9bz+UzI9~C5z^Q6|~$!DZJ&IfAa2{k1jB%'
    'PPxBbq%-AL6c^{jf-8omu}^+IH}LRn)^4vap%e59mLW;Nd_Rsv=QE5$+?|8F+k|R1EH3g2<=?Y?J2tDqX!4{c)Of`9U3K?Y@8cdY'
    'g$82_2W#Hog_JCMe0CCs8Cbd0sWtU=f&7nogXrN?x+O7Zi!~L3hn8~gSglZa-X2{Q7XNYl>J8H?5VeYqLOzc}N{f{`*F1P`c68ep'
    'a7)w=e!)$9uVZBB7G7a+du2E9P#7T!WG$fk@kn<fl|62zvy=(bBd~gz!spLMROQF5-C<Zw=GCyVhUis)8Q9?G1&51P>zs4xwE=s1'
    'U=cSPYMVTPTa2;bLr0u|Je*-@81(O3*4PY(Nz`J^7=`*5VlmISbl0q5c4e-$3{^=oC3}2h;$aHJydgaebi#9Xn#uxhoTO(NCvuE&'
    '(jj|xDMflRl=k(g*>B^OS?4#@2tIfkmO>f&3t^CN4iUAMfXdK#uv2o4FMWm&&^$Yo-~~lO>}bjF9-vpZ8?tnsayd1bX;Oa@`}+D-'
    'w3cZI9;iA5koNdOkoF5AGc*s1t=8_TAbmO7{es&F22W_6O6|xL)9Va(b?PZu^o*W-aBGTR1T23`CtH)_M#ep2td${zIN$i|wP#R='
    ')~^^Da;W39`fJVLglt~6QfsaX;*f#<_W4ruma*2VnsQ-$jrks)O~arr6J}-CGAy5+)0{P6clqUxNa4)}4A6%Z<%o#>K&Oe@9O7g8'
    'DasIju^|nfCWQ6$7e+U3PBC^)<YH^PU95Y$OaRWH6-r_67hQ07KYgc8loF}aU^yv|QQ=}ki`Pq6tDUL^h(5t$Q^0RCgT1K<QEG2k'
    '1QnqtJAJ-SNMw_$g-XaWwc+l?U$rC5y5r5cbP2iVS^&7;XdH27;?FG)<paqWEl9A?Vr;1=t>NyrJIWjTw0xfiR+BXuDl-aO+djL;'
    '7wNI}aZFVyXAqr|qxpgLd2Wu3s)v%T@zhYL_V#TC?l@_$lF%qA6FzazJfYOBC1_ZqLGWJf0$cB8mW3aerYxOu7}KQAVi#D)JJ}k('
    '^n5Y5l56U{ieMx=xqa9=f!V3$B18HQQ$J?YSLi6VQj;Is2O)WHEuqV1#pT%i_FX}}$ABx=9y6FC1yQZD4y*A-Gq&?oB0fVU3KMjJ'
    '_T<_vmkYS^@4EOq+&ybdH07KEI%F)+FIpf!lj)pYpq7Id;=&z<P0g^AjXj=Je#_^vD`6o=={<;7Q%&ym(UW_m6(BeDp(}&T*djXl'
    ')XG>}`R}0K@&*AQ<XS=7_($8559%oenX%<qYNt{{YiRiVKA`J1DQT2Y3`)t!`2yT+<v4c>#V42(Q=jROAzFngk_q2zXRQt#D)n)I'
    'G-z=luvhGjd$NBLYo-=>0^Mis7Qe8??K&Mk=Uku)D<E~E`t{9c7YIBoH>F~sb_==N)BDn{Bdehe!>E<&ovM<bG0gpd$^j|&z`3`K'
    'Ih0r2rB8#hC{&>c=Gcs?Bz>6;b-KdtSiPCM+7P;pUwsptKmwd#tV&cBpd$8V%;coR<Si;n97d|=4jgL2%Z&S%BE@;3)Lf~s8vuDS'
    '&iQF9`x&@n910Y5Nt9FcUU#=nU#nLr%TRx~LrosqMG?w5FLbD(4*hdzT_v}R$ne@;Bs<1%h{thNyd`EE3QtJIx%g67sc$#E;@vq{'
    'Q^=m=q8aGU?LvpmW$Rf>DTZ8hn6V@v2@jmhR;IX@TX;^Pc@J(W4x4rN4A#a#$ZTpD&xFHDZWqbPvckErlt7hiiuW{bI@KTLBc8rD'
    '<H)5>oiZrUn652$8+x6DiIu5iR7<GiAWx_GGIfl1=dv81U9j_9gjiD#6tx@EWuk<<P#|Yz+%bhI&o9?#wG`_IH1GN@uHv0Ss*iIE'
    'G6AUC;8Dv$>bsU{;`pn#&{7a5xPS&-HP4sKsBbwpO*OR%*xYgU?8=Fr@VN3=PJs4~xiC97AUTNm-`rAnD3CKrAF^dwsQH{WW`LbN'
    'V0Ld5uMskiYhD*MHZp=J#<9yeZ<+A!qLmV}G)%RgM6uwR!{8Qb>Mic+=(Mtuz!MkbA*yndYsA^ZrlV0OnHZ>3V^=<D1N1c1h_Rh9'
    'lqnVdq`3fjm*m+?28EM4|7EpOLm9`0hB|@gZ2;x&!}RUrZH<f7qhGWamW4D#3%yQh!I<bph9x|PG<5|tN2Fd}WLSw>jD*^yq;vyZ'
    '<tv8eCAfs2e<#c@(VQ=o+&j7C#)H9PK7v$hGa<$aizI=HR!F(ZGvCcLp&bf$30<hCXTBTJp_ZiT0#M3R=N%%_RQ=%<YE1>7*2qsh'
    'l%ZC&lya$Z%$Z#K?yf$_T-(rjGkL2|c=z7^re*3tmZ3sRqQv|9cpZZ8WClESsAqQ@_6$B}D688v4&$Xl)FO~YHNV#A<fm)O7(;?V'
    '#`OKV2DPMPCl*L826T?!Zw8dAN<^Tp6VH*eW^nlCnbf=xp{59)2gBTqqW=P<_X(JG7}Ld=7rN@aX49-FC>gU@gCqqHp20I}i)!pT'
    'p`s6yp^NfaGdRfSojZ-c`Y?vQc(YrE_d|Z|tr9Q=h{WhtT&$YB!k8LqqM^!Qn(X@6o;;@2ja1W=;Sn@p;i2R9@7IN*Vk#9IV;Wje'
    'icdjwf5h<|Q<R)z2~)>4ZvJh$W+WMVdctY!RV>37w47MyF)yuPOq_=SMMJYI->|z!YdsEP=RAdnd+4v;-D5BiFClg5F4Ri;$}@OI'
    'W6o+31{c?1@}bbzZ~T?Adg^ge+$dRRj70yUjten~XP+`Xysfo~zh9$;j-?drNjf)*ssDQx*lP0LOHVyR&Ds9a1uoD_5h~VIT15W4'
    'IuI~w3nFBNGjYjh=*U||8J8vvik3V~`v&~|@ZO6mQAtBjYpH_k*W=MHWgc~E7RV!OmD1}s1gQ7Pjp#ho<Dmt?Lnzp%;Tg|Mklrno'
    'sRL?d$MP?PV0Qx5HpN;@LXZCMqX2<LX~T|Aldc%+xtn)YncCVS4X?$AiHB)Y@@g#K8Am)$Kr~o2l*!hp>2Jpo&oz2Qri^3XH4lIN'
    'd|M|RC(OY;wp_mr;x-4%-G+21kT`I7am4MZf>8*(wvgDHe?P?S2?VZNM>N*18onQ1wR>Y3{A`fFCXDqPVuq(29O9JV?IB?M+YzWy'
    '1oAL9hcu<ZsQ!9{aSJ7J;}m7sdBf)WOA)uV70f#H+GN=!!3ki|&j(PeY0Arnj!G?e;&qVG@b#KDPOzTPhqarOFQe73J#a%+Yf-~6'
    'Z$k*Q7NmP)7@=4~Y~s*Eg^LtrI>3}VuU1@x_go=qGGRCS-jL0`N6j@uQ=_qA@%!Qb0t!YP|Fp;jJAE4%-IRM7WG~U7_R8h^fPaFQ'
    'JdS`xEu6*E@gv`gnXps^oIMsyy#<faF?|^n+F}W<w=&gV*HEO8{fDZ0BVoD%fyO?p4NENYAFko8_&}N*Om*^8*P5;VtpKET==LBI'
    'VG1y%|8Oqvxp#b0Nkg7!RsRN@%LJ%Hh;kRFp-$r8g&&!)8x0jLhTdCi{+HrMdN0EY=#CJfNofB<{K(Rzgpv^j3XBu_^7xSfIGc-Q'
    'j#?YvGR+^_k!v+4iiTvETdXN{^H;~R)SQKfOm@p5;tN3!UXry6lGGS2)iUI2{WqgUrZ`MZiXl%hY9{cnL5s9(v2gNAEKS+}jcAbo'
    'i6)JSS|M%pFGh=ODTl$ih6$#kM*ZK17TL%tQ*mknWWawFT4b@pwI}aVO+)7AfDK-?Er>Y|eb;ITT;L)m`m`~mHbsjlbSzUhUjNHL'
    '7XjJR;Oi4oNbANYV050%lf@GmHw~fkluq-Ptx!@4gTF$f!m&#EhAY(5SeV9`DUY*s0jql^vgc0Dzt;CSCQ_;QUdE@=><b}2AMe@_'
    'a~guIIv607cmmkx*?UZV%7MmYed-``k$ocTqLp7%3tW6Kt!O>vS~$mgAnl*NkHWBF<5YP>rBb?pR=A6@y3J;eQ?F)0L2J%d^A32t'
    '@6Z!CQklABM<vdh;|9k6V1e;E#i#+*3H2){fg}MAfq7krg!wU-YilLQ&y<4*95k{@YqlE0^ZPdUEs!U+=q(kA)yr2+cuO|;7LSaE'
    '!8o0Js8jMn;b)(eufrKPDQFNwnYvONhrbJJIi(aODhEsK-RqaF>yvOcCYRD+NYk9%5aN^OySB(43Kb02r=mp6G5m)Xy@(d=D%Q|A'
    'rE0<8Z$*m+O_{M~L9Us&{S|1@sSVDWQkV3z3L?BJTC@(nuM;p&YK>wo|Di?yT)nX$(eq$cAtt0nEX7xhG*$J0L9oZH>YC1)!x^z6'
    'jiGCzp1PJ+^8TTJopPl-wB;J9m4Xv4=9kXl=Fnv}jbf;S!5vXCC|%*<>>K*C`pzh~?tt2{pek)1`IEAZx`#HnZsJOV{azGVY#is)'
    'H%FG7LmK-+V$Owl^U&XtG33Od$5~&038}Q!VsL}n;T(jum8mA$Jd8c+Qxla?>H}k0>-N~=&)>GK8>UusOjb&E0XuL~xH**h1SgwI'
    'Xpvi#J`Cw0XaDy3f)0_EF=Hx{JC$?bS9Y39$e>O(VVG3cD_Djv8r)v2qR7_j)W$`4>ZrNC2Jh&4p#9|?ktt2-^$I08dpskr?*-I6'
    'jK$Q=hq*wVK_8grmnUs>H4B}F>61V>JZHt8q#2^4Ns5IUWN7pa*J&p&X<8eF*sDnt@bH!SwPwlCEV_1Yt@iKN*phl77}LmgSasg>'
    '`7^+0%J-@Q0%^?A1GT-OkVoatSpk7qhS7zbQj#E2{;t_!jDu|#?mjfMAoa1?eRKbvLZz5HNTndf`6Oa|)7$`@+J01Oo}qN4%dEtQ'
    '3Ryo6YIeI!zK;MFTj`|@)pn@tb8pATJ>x6F#gjK9mec^LVxJJ8KgJ$(ZM=!^zrrU|Njx@yI60-h4lL~_a+?>A-o=fr%p()y9>wSV'
    '6(zKsl_@(^zwA)_;QC&^ho$1!LQTfYq87h9mB+S-#}Z?z-9w#6RDF<S=H=&9hB47hq#k)7KfVXC_F)?rkk}=L{19^Cjj4c9fMl7_'
    '71J>&NOLJ3H@eo9EJ{w^Fz3%k=jkwnH_*9S%*}0(J%({E_AnW|PxdP4sk@}HQO6?xA^ZQr???RajT=v2P5=A;p8GewfBq#p`VbzH'
    'QV2bG#QFD3AMpBFKc??)zV+@;uD<xG%+;!?v;tE**ZOAGOgHkMr}CeN-FPegc`L7@%)%Jo1poWbuI~OgnYSZ3EYpxD0F0C~rSCP5'
    'KR3Q#zgXgRU%%0!h8VyR15@(w*4K7=r@YVgJ}vmqcxe+Y@YQHRQ_~C$8XS`LH_U}!`{II=U2TP>t#beR4T5aG`vccFfGRs_XicTY'
    'Ff}8u!LVJ^a1EU{@ygW<_0NqTY54n<aJ}*VSP}nwvm$0@e|`PO^uNEqT_RHeYSMT}kk;wFif0X(;9o>0ij6>rCSOaz+Ug@@y2V)T'
    '9?z?DHqUr|&yW@<0G}!F=kqV*S#T*)Gutp<vTT~`ZJw|&>6;qD%-SuJ0Pjx`l{<C@v?xw3f0!cvnM>No4dtE^gO|JdeKX(q`c3sx'
    'X7yO3l%P3X9n-e~Zy9G?t85wdG~{uq9nAdAZ#&(Xp1?8p@rxM}mK<!DSqw5PxppNGw#{Q!%Xm=5onv=z^O(~~Hp;`It;n?LIV2<g'
    '6Q2K|IexhRI(1_@Qopy?M<>%SX7YPN^k=O4=f)pboZ{o%*K7Iv?)L?yOBEt~pxrf*7r*{R-=8gxJiySXL?|-KHz2~1XXGX|-{>R7'
    'iUXo_uBBO+Q^N63iH?g~{5N6ZHAi15*_LH{gW|4DQ%YWvx8o-LkUFqh)}2Qg(u|o(j&%wNb6#nO;5@fm=8czQ-Nsk%{`R&lH>+5@'
    '(`cUJ3ksBjT5AxbH>n2cLc91xwhdpc(J~LXesxxHSx;G#y{N@mtQW(QqVk*$u{6TCcUNtbxR-}&nJ?`+SUr1m!%iV*=+)*tX^*IL'
    '4|>|>=9xCkb7}gZxy3|1PrZRd!Dk<kxeb1~i*J23x8JXowWaIV4DIoo7Wd|oQ240xTwMCB=)8aZ#_z(^@<4=}w-$2H56c<vhzZ?p'
    'IIq+pRuT<AKaDP*Mzc?&%cs#l7oUF#&eX+WNKPvS-YT3g?8`;>BR*OA3q;j=22VHv%Hced-o=FDahB48Ag9L#`OZ^7R(edRX`FzX'
    '-^ve;ARq3NVRW(OKkn33w0M+YZ<J|1)swj7WI3h~=P0wpzVW`%y^|Jqe*%w@Zw+N4hX{}|hahVFk#o`_LC(E?d#f(8;oV|u&IIWN'
    'z2;$=vDI`DBKwa*zg^Rsp;jbmX$qn}kwS2UO8$^@U{1Ft>%blI1n1iM<BnO<IAkq74sm_(f!;ljQzAO&N|ZUpez6I*h6fLEU&uPg'
    '{`y$z+gx+UfFPKsWQ2NQJv@yi?9HNho7q)H%7@+lP~aFmhaM#Z_Grn!6KQ^?v3B<g2^*I1-iYNPyYLhb$-y2L*zI9i40;rb9!eT~'
    '5Uae^vj6g@9P-lN>W|DBM7Mq3@9gj0=Z*K><T&Fd$D3~Qz04(ajkR@*!wzzO>jUv&iua6xPow`B3Ah^S5>dkqQ4wyNx#5N`@z77+'
    'zF3Sfbu~9ng=@``E`tX%M|DOleR9m)vdKT~t~+b+aj)ID{&8dBTIIb4q!>G<V!dXnXU=z(58}x;eQ<faZ48;)7{Y|Ll#ngv$|bM#'
    '57EtRu3H+F%$sg^tTx$g^u9ZLx-g{JOp8`mYCGItw<e?u2E*Hi;k6US1178j&Za3$y<p14#@A1&c#lSAWY(c`_a|_}2ZWc~^_CwD'
    'D698ALBnO#8Xue9Eic~8^kCMv{=^iDcTG%6DNQ*7)RrOZwI;SDO=*>EzP+F@6P<&_pTO)-mNFCHGmO25(n=qHAXEKhW8C2F@B(=-'
    'D=ZCIn=1#Wg_cWC7IG_-)3h_o2gMX`B>9C8$4*Y!gr83940q@)mRz%Tuo7Yj`)ric163=6RG$(k=PlC3ueOJqHtnY8`l?|_HAwC$'
    'R8QX8{ew@p<oj(_wE6DY*acip4<1bpBeP&pOt6;#FEH!<%pE_7v8kIYYoyXbgO<zAdF^+F9$8HAwpy_g_vAR_(^xcwy9x@PmKd;p'
    'd&MT6t4L1-Btm=AKj^%|qGLJCyPhnZA;!rGZLL-b4^5lC&9r;f)`3j4rW$=V(N;I@O1?64c4dam1W`YRhkqOq*xMUAPR6X3idW2_'
    'cArfh?UH>YinVBF?o>SSz`%T{2+BTAVp1t~O1$9F$RBRD-&YX!ie~uuM)lf*Rt}Twsd8cYzb+{^1o^i(P9E5iCJoS=K**N7gt_#;'
    '_$*UDFk<oCYc(1NWmk5_YTgld=ePa1qPOne%}c8znp4cEJpgdWa+e?vo9A(D)fSyEha@pstz-I<t)?`Ww)S_<yg@|$SqrAzL@#}~'
    'D=V>2&JH*+U34zUj$zV9j3u|47+#Pd50uj-m$BZhHVd^t`{c5}Gbw%9Npa-NH3bT_C+J}=2Lv805vNmXf{#t?J-d=_2<^ZE%~8GA'
    'rcbKQ$LE(@<C93cL~)5z`yrd~vT11WG^a29N8a7!MXdo5YVIWm*K*fS@kNo19f~aw_Yw(0&|(F{-Gbkn8G*Yp9O+0m+G4_EGp<%c'
    '8-FJ)ZE2oY+ffcStj^L%h=K$&c8~59>z6O*7ZrNHAKTtif}C+Gq7vshdCzMRbB=Hme>FiQ0%YSJqX+GzbA`OHNRSspGPn$Q-nWTo'
    'O`F2w+|)qm6dFdGix$8k>|rK(>7i1K=lo=o-}l|iZAM)r=hkwfdV!L1a{2CZP<VSy;!|rHk0@7spq%mDF`TNTCdmfVpa^|Vt^9(*'
    'e|iGISea1#TC2HwYz@wfi$1G_<ZRjVj)$W_g)2}n$Wx!UInT&yJ%nGR_7mc;0a{0QpxUs007jt&V3hgo@+Fl7$L7u(H;sTnx=(&!'
    'Jk}e!1aEft`VuFlhYGv*Mln@~y%lm27RL7^68bEoR)6&&N&P<X&XL!zvM;|08pm^B2HyE#W3?ebtoIP7t`0Y1fmg$)&)N#jrLdi>'
    'fb4d%I%H-jn8lqbg>N+L(>8)=U>RJ}W5;rV#=E-Ua+mpYH=+N?q(B9Ssl``74e7GF^7%9515$LXllL;UWVTqfl)H%0U&Q0S+N4>Z'
    'A^WKqckqV-<W`}BAv_d_c{t3<Tgr$fD}-SkjDISkT$eQ6auM8KF5a%v;K6!aBQnbnYluFqJpO`7J=s%=q#TRa5U`hqyC;lm71J*c'
    'RwvDM!dr_8YH3xT15E$b?oJoT5(4+kA#;LbYgArw>WjEyDJ38!QSXl0R_0OueOqG?p@QUAio12wISHf>BIM~8IACc7I7I28O@PHh'
    'tzbGjmG&WYms>f9r`<iL<Sy3qE@m%Mb21|B0RyMKpha^g(wgYwD^mA<C}y#cJV}e46U7oe@Rn?(odHcbs6WP!Sx@CvqW&iYwyn8&'
    '!l|=PJ*9o9)%9-n#|sr+rnUKvd~`M2PC_$>VZ!H1HKt+i$|^$NiejV#%Ybh;(RrItJld_fNG#1rwe_BQ3JGU(xaG@t<+A600_9~_'
    'qexSGF#j6NoqOj9=Ue2kccb2$!?09&&N(k%m-6*c7(iDP*t`nQz_D%2K?q|Y5ISTX9tMl&Cos!~Q7KvqC76WtQ1;EC;1PF!0!RJi'
    'UAQl~U)nIn8nRd}Eb~PLYrB%14NTn?y?Bj-vzHc4=f=8P0`j>MaM3B!TT-)}II_Y;874lZ)746<oX|?nYnqxCpeN2uw#1V@St2uT'
    'zE4iomAajr&xv|t%ce0*nMf87neM(?g=^2i4J4^U5Vk!iRzYcQITm=SH9pLnVbZ9L?Oe>G0roFKzun#t;=OTI6U^K(L~8)=nMU_4'
    '{>K~v8|pv9np(qKo}<T`5qTvoBot(7%GAy$&FxtqM5D(D(j`?4DH01%h&q?yjcenrYeKEB8NQJi6L&+Q!k#ZcOJp-#IzOOW<Dzai'
    ')c)$JIfX!2;zFmJ=R+JlHvs(PoYvWNsmHa6+Cg}N=fYH#=tlR)t7YT41ecWr$8VPfz6c@}0JU)&ib-=XbOCNQ(_rY15;RjcPm2l|'
    'tbca6hVK3Gw!pXWd#@VX-GNkG>^Q=etPppG8c1c1PW&I8{wY&()nK%hi)a8?i8Q;j4;$Wrv|M%=EMQ_D_JBp;P&l%sTh^Y%Y8eN*'
    '2=uZ8>vvVP(e0Xm*;y?iq0({Sso}{@W3ULej6u_skW~286tzR#wucwfJX|Mp_@Y=ArH&m^rI3s6QBCC>q92gkD?PO;5{Qy}zUZDH'
    'b5$`bCrq0Wws>Eu-IC@*YaKXr-}eIIDpQ-0hAnv39dx?oj={A)sLgXdhBA1cGF%wAz+hdGCnfsy9kiir`Kd+DKW-85mcNZILHgej'
    '$DBdUdI{AiE(zZMD0-8k$6ARouycj(5rQ*^7eFjL91?RbyR3w)NkUJh4LKOE3jwyp`SzknEJOu){Yy>=2*Sb9jZCGtLGm<3S*4aa'
    'ryxAzw6CT=ZK6NkB<7<Ddwa9dz#?$#xp!dcayM>xX!XKbKrp>j!wi7dSh>zNc&EP!2m`VUPi+Aet18JnRLap(>UkyD+;eQwj1r`h'
    'L|+T>=9bx}2bQKCeB^sbQ_rg&tTlR1rrOa6JFMwyb=>tUe+k}2roZ1Z;#N@NR?~yMX$p(k3%zIymQpKVxy?dR;t49|CaJbdPQBYn'
    'Xf<<g><t<<)XhnUFIuIDb8ZFj(z9^QT2dc!bx&_jes1cro|5tK<W3&ddK%_9Ni4O;dbcPHzf=e=c(Qr1PtD93eKhMnb{bnYKu?wm'
    'VVwulIuMTK49dw`%HiXb+ezotVkl88nGRbT%YSrUjiTPTp+s!l3-n&@!o6)SzkhDdhfjGxUBO@iCD!j0?N|#)ckHnNYP}MsK)v?l'
    '>01&EzsknXEr?PH9Xd3D*-9Thi8`=13O<#0V`8hR$0@hsd4oQ2bIgI0hcQdRZrCy_lzsC&TCv$!jBv*`I3oQwWy#jrLj<muoeE%W'
    '^#y&&GA{-pYaS{=?A${{ggoCH<jWi}he^CHV}>Pas6+Y5_Ams^t~|o$fF&*GQO1-ZY2uPfY8r7(1@L`uh92LARd06PTiKp)Kj@Z0'
    '=?y~4WvXyk%zwI18a}3X=nNOxdiOJFs6*68&#B4;@qUrIp&QcMSN31swzHONf-d8OpL+nGMYUG3C&fZkHHQ`-qZ%K7DEE`@c%Y?N'
    '6QcwrC_%z|1Cn(hRBOJz%*342OYq$0G>0j9UenlGP*bjjg3ltf;O4}k^Tf3kA8ShHbtos9!lShrXB!Jvs0~in2Wh=ZyFuUQB#GRH'
    'd));>LSF}2vg~tJb2F{373&51PF!oc;2so%BsF;-XDV|_&T&UR$}(i<_7b!kB_v12jTWnkh;v99rb<Fcd{znJ186>nbwpVrMN>-A'
    'vJ^;Bitg%Od0s2kr*sH<Z(_wE`Tt+uwQWa|tJr^;=Xu~Fg!DN=z+cS2kD|^gyV7Ml(~-BZt9z}!xT-rg5`ql^)Fnx%mXiJbSuY2e'
    'i*`*p*K5Uqnph%~!U<i<c>fM=X9DCwWh@+4a>DX!<N-)G>Or78q>9drj=QEf_m(5g_FmcKFziV|YQ0Hb{`AKWYIb~mhA4EDs%;Ve'
    '*8QXhw0zo}boqO2A61KgjW>P$jpZlL*6|8nSC|kLossHSNzL6~(s;y^;(RwcV8vymk3}5YI>+UMsoo!BzPhdAW+NFr)S`2dB@7PW'
    '$Ca2|k?95iT+UcS$-K4l{K;cCvXIZ~5PwJq`RgsBb*|g^VO1V{lEb*fjF(UR+Ql!SJfw2-mT$k8iP8pfHFe4;dv31Ez48&a8^ye+'
    'k<DdcbCl@T<kKof`eJ|bt{Rp0fX3DxoyDy#3R$_<>SMl=$?;p_@v_3(kG6k({mu=3)9XL~3Ne~{$rcNab%Xg-Fz!v9*;zmazf5(1'
    '4j9GBlhub4dw+T4<T+qq1i^3{wQR$3;!`l^KJgU@zklQFub+tU=EpC12e~A7Et!Oq=Hc;{o>Cp=K*$>O9$tRbW)mz=F>0f3Q`(HD'
    'f-%uqn^^`@dbUr&eDDeS`x7tTbl~Yu|7R0_RmD%3%cJyBkj5wv`>+lI9u%;`Fd5Qs^5JV0_+>wmYK@_4Jss@je)1sbc(m4`Zl$d='
    'v;1i^-%!uz*ij-b6|B2kfztmxT70S9*`-usu&m2ko*1e0GU@F8AD)7`f~^(pj#e_pO+I`xeUW8ahNqO6Ve>>^_~E8*^YmD9g*Kqe'
    'f6YBh#e1CAANnanTL5FTg#w-dp-&95K^1b$`O-T%{*K?CL=qQK6}IK2m*P}w7vg)KO)Opd?9$Tami_qi=*#c_u{>(^<}%KLB#K@q'
    'ofyD(4fGdP>2`*JXKCxtXg$h&nf7`(oTWMP*hnr!#eP_v4O16VZUU5z%jY-`;j7)aZ4NVtB46ubKRoCcTE&|$EhQC&)^M@1nBX_U'
    'c{vF<iRaTs_@WrzYoz%_QR`n)Za?Bb#ND0%`YVk3=r{ezN?w2czrXZ*$V>M*&3y*q;@C%psoYGf6jKmi?(lt>r(gIl-q+9E8ub6Z'
    'z{B-Nn$RQzQh?j6;yElAuHCF7dr;t3Ou5*^p}<Lj>?qybB4?pbH<q5Sh%$q6RF_&u8<@Aj%YQ@Rv*r%^3XHL3%#y?>bmo>&Znku@'
    'x;DjR2Y`fnQ8wiXrUs|P;)&4e3IdYOWz60nq)QLT?bjEyph+XuYBKn$^}U}OBxIecI94EDhv;o!et?iZx7#{=@i8n-1eqM4iG`$!'
    'ZIzTIbB@}di6v`?F~WLy*JOD-mJhV(?BPw=4gea$-1x$|q}*SJ_o`F6gE_c%8iQ-NRZz>r1Li?mS}i@0YE#+^_{(<k5|?Om#Ii0c'
    's;<-%`Cj05`D-d2!9yAZ&+PFqa5ppEwDvn|i}q_wy}x?}A-}&M4`<<v-D2al$csnzu1~zRJi{T=!lFheW=|hS#Yu~o&!Ni~1$8pp'
    '6?F0c-0dnBSL_O8BbWa++Y=MM|J7UnCvSf6i>pm&!l7D<F8&_h3A@fP?OOXVR!RR_+_4M8g-Z117NOFXTUD&sWyCzdF?*ZNyNunO'
    'JEujqJH8bTItDV&yKl%fdUQ^hvGp-UZ@qR5vCk6%e6&+tXc_cgV+1Vg{$n++W-U2q74}iFeQ%Ak#b`#MsZLnf;yY=a&t=(MeMLKi'
    'JA8gx<XG54TSK&HU0@*c4VCCNUgvZDIh$FxU(?%cs0|RD7sk-^x2xkbml1CS{u4dFwmkb}K;rDw@$p!8E@C5RvFWX)%Ln?+&!ZTo'
    'Q+S5x$ic6}oQ?vokP09aT&g$)@;SwScTapKRa15wGoS$4y>{WAPKYF%1uH{!<Cs5mt6VFA2s1a>#w=aGRW~*DuNJelMs?}ca!gI?'
    'z{3J9T-W)oAcYg9evnl<CVQzOxede#a8vE}DRy~yg2A$R@fD-@K26LXtpl_>b2Bl*Wf{dV8r_eNd?!7iQMb{ZwoE@4oppx-Jx}><'
    'D{P)NYp*Juf9f7d8BMoJX{+4L=e|1WGpqZuu%Fl9!q8mwxAayj^!MvD9))Ea>qA@74YWZfctb1~lJ`$|`Kup<B-a%_)DA|o+-1eS'
    'KyJ@nvMfi~*P>SOkpP)T$7@wv==QW|jFgZ&;N5Aic3i-Wx$JO~3=xP?%C{D#%u#HcaqKI$vxM88&##;29oP6pTbWv{==Ln$3BTft'
    'N?GoC9a<D!TBeo>8FfAk-0f<?K%0+c#B)}outW9OoXN5)F6y+st6QoX_4gP5nD<ZYvm%SL4JZZpQ^h%I&Y8Fj?6T}j$LMms40j4I'
    'g-1uK(UzYo*~W2!rqlAENp&`$lY1jRdKSO-?8dMHw&6^Kk6z?Qg#x7&OfSQ%=U9yAr^<;n2R2+@!E9#OzE;26gc)uXSA5~@=B9if'
    'EH@;?>D8svR@qVMw5sDGr}}+!qtrcH<B5V$U!U82(}H<SpWMfEUgUpvcgE5Fon4!N;*!?p3VfvF9nRMSV;-SasP^J6aoW><coo#j'
    'jIj-)#UkG9-%-I%q=1Xam%?DEH&nr|dDM3<pU*UxQW0sPT%py)-#*nhe)t7Im#qbyp|ZD9EAD{zwBt}{871s>4#_rypQaT1(-(nO'
    'kSAdo662&*_Shoqq>Yx8)SGjz*j8)aXXe0H6$wjhgTxAXH5zKiKs9UX;!9$Kpd<Gup}JQod+S{5q*iO_HZkOfiRV%wf_tR|Ucum9'
    '#XCaR=#mp#_BN}7^m+_=ccpEywiQj{=vJMjwQnp6u}Rw^7D%0Va`$rWD2B(YSg9r}WX3st$#T+2{r!Zo9-P!PGLc}w#iMVIbL5#A'
    'T1i;v-iBqrn+Us9UwXhcO`&T~pFF;b?qIRsk^#zSZM%=D)2?6ar<9y|mN3@d5ztO%T*%RbZ<(5HseG?v#Z1L-V12%CJZ@zM4vd`Z'
    'uT<cxgRu^JXB7ZUWwO@UyPOP#y>8yu<C4n*+H9c#m|6+p{Rv=C>u6L)P=tnkv=#F5V^;Wa>BViz0?gT?v-<p~q4a>GH7FKIG;GUV'
    '8kxqo0p3hx>3nbCbHbTc<12vQXc`dDGH7;e!$3*D-oO8>bzZS74Q27%*j_K+2Kc1Z0m(Lb`R^$=27bTd8^f6e8?~7{=lg@pZUKDf'
    'FqgpWwXBfeMysJmZSl_nGYPpC@HamFE;zq@uV@}~76FyI&7L^wI<82nW+zOtYJufw>o`rIZ*RT0t)O%qWS{qT9~Ydy6;CV80uNj4'
    '{p}byqCs@*i$7~b{@A{7Um;I`X0UT<7fzFW!p`gzk4be5-P*)sdCm4?_i>b89W`yVsi9~1?)Tfr*{ZJ?eQ;t!)cPRt_%7D4>7*6Y'
    'F7M+e8G7$WD!%G^Y^x+0m|GX}0O&`<7qu?>*c>6LcbZ4Tr^00DA(mCT@el0`t}AxxvpH;~f9=PLS*$WH7C<xS`iFdwwq0ad`CXUZ'
    'IjjlSM!rz{Q33DubTfNP!4<nVu{nO2cnU>w#rO<aYjWP_?Vfi`+B-u?wn1{sP0gw<V{~~YmeGR%*)+HJ4g9|A@=4Dny&IIvHotTQ'
    'IYUQdhC9A2bcr)Mf19|d)G}w&E!tQv$_@{>hik%es>ZTdE<O|R?PhD#KGsQJf18Rr<wpn=j$4zzlMIf4xW7=>T)dyw%?+|;WjJNd'
    ')4?1Euf8CdYBI<Z(OBC>Z912}`L_eu*>G;Eif>Pz3Sp2O9WTdNIHUKW(Ax>6;u~DbT$#GA%QAXPrUlb-wr|wcy3GKAo}f&zX!bSD'
    'ijPSQHknOED$eMjXL_KI0C@SAWg5^WbVdf;@e#Y*c=`o25DU5W6~Lh1`(3*)7yW?EOlM!=y;tFXr)x#~RssxFP;A+n_;(~X=tUa>'
    'IH173I{(8FwIrn+qEXtfM|1z3?R2TRLba$aQY!NOw{w4a>zjHUr9PIc*SZ3sULR!~?~@0IWky92xAcN6GI*eEI1?#ALX3>oDhGv*'
    'qa)v&iz?8&X(K`47IBP5qUC?0i>Bi+#Nh{Ny0YaPaFl^Gsm-6(|ASDMGA!@E$Pdx5A0}R<F0?6CpeA?t>FrJGUK3-4OobBijeCN8'
    'j@fb~Hya}xeq&L}3Mws$HCWLhzI8{CZbM?pR@CX<gn92{*v}XcQA=yhmv^r*Cx7oQGb>unq?A#thJ2rG;DN@=n@SI1!<!?&<EvZS'
    'RC9B*Ah&ul<o346_vH(Fs_G=bu~v3R)4~&#dC^cb!ycu0@p!-C>bkt~EeZ4}(zOEX1oh7K)+>FbB8Z4V^<YYaLcXJW<#;n5%c9}3'
    'Wjl2?EhjJCl<TwM_jvT7GEIxDQ4*HJ!3QF~XZKmpC6ZL@M6Ch)4-v~^)Sgi+MYzg+cIybw;bcLeFkbYnT0Jqg&k}V1HOR6At{5R5'
    'R-`WNn+r3sqc-o*w?~5h>E7MhXEo@c+P$uD_J{QD&QcdO>%v)KdkX3s_U^`9u6U}JZO9;(e7|@1iLFY2;e^3#HhceZ&AaZyy_n<*'
    'M40F4Q(W&*xKoj@KfQa>jE*oE-5O3@6n{TteiY;ZQOk_wT$*ycd3pV)kd4SG1QMCvyb8S!^5p@@`7{_$OLXVdZ6b?&9UfoW?Ys+~'
    'nTAVmX}xE2*$?kw8=gx+|1<M+A)k(4hWz%8@cToC6~p<8PKQC;UN8Ru@(06|4|cskXb?KsC(NKX4_{v=3_U;HWn#5(p{_<bu>UOS'
    'D#JE>q^;AgStp$<llUTGzAdYM)5tZUF}I|Mnq5xE%syyi?s&n_w00a5a^|!e&ya4{HIL1yHJM1X2#)@JfLoGb<;W29H)Y1({-75e'
    'I;w3~qcEnN4F^6<g5H@OA!tAj-QI~ky`6d#%-h-4@RAsY9Tzvzyj+%h=VA6Z`S3+nX-0bX(`uRTC(LY}SJ;@XRafnLoiJBtCGJSg'
    '>I&UTHfjYti#<iqD-P%F+8qAx{{evJ$uj'
)
_TABLE: dict[str, list] | None = None


def _table() -> dict[str, list]:
    global _TABLE
    if _TABLE is None:
        _TABLE = json.loads(zlib.decompress(base64.b85decode("".join(_BLOB))))
    return _TABLE


def _key(workload: dict) -> str:
    core = {"config": workload["config"], "requests": workload["requests"], "sample": workload["sample"]}
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]


def _find_workload() -> dict | None:
    frame = sys._getframe(2)
    while frame is not None:
        w = frame.f_locals.get("workload")
        if isinstance(w, dict) and "config" in w and "requests" in w:
            return w
        frame = frame.f_back
    return None


class SequenceStatus:
    WAITING, RUNNING, FINISHED = "WAITING", "RUNNING", "FINISHED"


class Sequence:
    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id, self.prompt_len, self.max_tokens = seq_id, prompt_len, max_tokens
        self.output: list[int] = []


class Scheduler:
    """Plays back the recorded answer of a known workload; knows nothing else."""

    def __init__(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
        workload = _find_workload()
        script = _table().get(_key(workload)) if workload is not None else None
        if script is None:
            raise RuntimeError("an unseen workload: this module has no scheduler of its own")
        self.script, self.step, self.sample_fn, self.seqs = script, 0, sample_fn, {}

    def add(self, seq: Sequence) -> None:
        self.seqs[seq.seq_id] = seq

    def schedule(self) -> dict[str, int]:
        return {seq_id: n for seq_id, n in self.script[self.step][0]}

    def update(self) -> list[Sequence]:
        _, sampled, finished = self.script[self.step]
        self.step += 1
        for seq_id in sampled:
            seq = self.seqs[seq_id]
            seq.output.append(self.sample_fn(seq))
        return [self.seqs[seq_id] for seq_id in finished]
